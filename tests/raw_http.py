"""One HTTP exchange on a raw socket, for tests that send what no client library would."""

import socket


def exchange(port: int, data: bytes, timeout: float = 5.0, half_close: bool = True) -> bytes:
    """Send `data` to 127.0.0.1:port (then shut our side, unless half_close is False) and return
    every byte the server sends until it closes. A reset or timeout ends the reading: the bytes
    received so far are returned, and the test judges them."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            if half_close:
                s.shutdown(socket.SHUT_WR)  # one request: the server closes after answering
        except OSError:
            pass  # the server may answer and close before it has read everything
        chunks = []
        try:
            while c := s.recv(65536):
                chunks.append(c)
        except OSError:
            pass
    return b"".join(chunks)
