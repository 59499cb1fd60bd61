"""A static document set shaped like real web traffic (SURGE, Barford & Crovella 1998).

File sizes: a lognormal body (mu 9.357, sigma 1.318, in bytes) with a Pareto tail (k 133 KB,
alpha 1.1) for the largest files; popularity: Zipf (exponent ~1), so a few files take most of
the requests. Everything is seeded and every parameter is an option; these defaults are the
paper's as recalled in docs/benchmarking.md, not truths.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SurgeParams:
    files: int = 200
    body_mu: float = 9.357
    body_sigma: float = 1.318
    tail_k: float = 133_000
    tail_alpha: float = 1.1
    tail_fraction: float = 0.07  # share of files drawn from the Pareto tail
    zipf_s: float = 1.0
    max_bytes: int = 10_000_000  # keep a run bounded
    seed: int = 1


def file_sizes(p: SurgeParams) -> list[int]:
    rng = random.Random(p.seed)
    sizes = []
    for _ in range(p.files):
        if rng.random() < p.tail_fraction:
            size = p.tail_k / (rng.random() ** (1 / p.tail_alpha))  # Pareto(k, alpha)
        else:
            size = rng.lognormvariate(p.body_mu, p.body_sigma)
        sizes.append(int(min(max(size, 1), p.max_bytes)))
    return sizes


def zipf_weights(n: int, s: float) -> list[float]:
    w = [1 / (rank ** s) for rank in range(1, n + 1)]
    total = sum(w)
    return [x / total for x in w]


def write_documents(directory: str | Path, p: SurgeParams = SurgeParams()) -> list[tuple[str, int, float]]:
    """Write the files; returns (url path, size, request probability), most popular first."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    docs = document_set(p)
    for path, size, _ in docs:
        (d / path[1:]).write_bytes(b"x" * size)
        (d / path[1:]).chmod(0o644)
    return docs


def document_set(p: SurgeParams = SurgeParams()) -> list[tuple[str, int, float]]:
    """(url path, size, request probability), most popular first, without writing anything
    (`apachetune simulate --documents surge` serves the same set)."""
    sizes = file_sizes(p)
    weights = zipf_weights(p.files, p.zipf_s)
    rng = random.Random(p.seed + 1)
    order = list(range(p.files))
    rng.shuffle(order)  # popularity is independent of size
    return [(f"/doc{i:05d}.bin", sizes[i], weights[rank]) for rank, i in enumerate(order)]


def request_paths(docs: list[tuple[str, int, float]], n: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    return rng.choices([d[0] for d in docs], weights=[d[2] for d in docs], k=n)


def summary(docs: list[tuple[str, int, float]]) -> dict[str, float]:
    sizes = sorted(d[1] for d in docs)
    return {"files": len(docs), "median_bytes": sizes[len(sizes) // 2], "max_bytes": sizes[-1],
            "mean_bytes": round(sum(sizes) / len(sizes)),
            "top10_share": round(sum(sorted((d[2] for d in docs), reverse=True)[:10]), 3),
            "log_mean": round(sum(math.log(s) for s in sizes) / len(sizes), 2)}
