from apachetune.generate.render import Setting, render_mpm_conf


def test_render_groups_mpm_and_core_directives_in_order():
    text = render_mpm_conf(
        "event",
        [
            Setting("KeepAliveTimeout", 5, "short: an idle client costs a slot"),
            Setting("MaxRequestWorkers", 150, "memory bound: 3000 MiB / 20 MiB"),
            Setting("ThreadsPerChild", 25),
            Setting("KeepAlive", True),
            Setting("AsyncRequestWorkerFactor", 2.0),
        ],
    ).decode()
    lines = text.splitlines()
    open_at = lines.index("<IfModule mpm_event_module>")
    close_at = lines.index("</IfModule>")
    inside = lines[open_at + 1 : close_at]
    # MPM directives inside the block, in httpd-mpm.conf order, comments above their value.
    assert [ln.split()[0] for ln in inside if not ln.strip().startswith("#")] == [
        "ThreadsPerChild", "MaxRequestWorkers", "AsyncRequestWorkerFactor",
    ]
    assert inside[inside.index("    MaxRequestWorkers        150") - 1] == (
        "    # memory bound: 3000 MiB / 20 MiB"
    )
    assert "AsyncRequestWorkerFactor 2" in text
    after = lines[close_at + 1 :]
    assert "KeepAlive        On" in after
    assert "KeepAliveTimeout 5" in after
    assert text.endswith("\n")


def test_render_crlf_newlines():
    data = render_mpm_conf("prefork", [Setting("MaxRequestWorkers", 10)], newline="\r\n")
    assert b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
