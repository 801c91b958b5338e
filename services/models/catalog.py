"""Models worth pulling, per role, with what their publishers state: size, licence, languages. None of them
was run here (no hub is reachable from the machines that build ObsiRAG): each says so, and ``obsirag model
bench`` measures one once pulled. Any other hub id can be pulled too; these are where to start."""

from __future__ import annotations

from pydantic import BaseModel

from services.models.installed import Role


class Candidate(BaseModel):
    model: str  # hub id
    role: Role
    size_gb: float  # download size, from the model's hub page
    licence: str
    languages: str
    source: str  # who publishes it
    note: str  # why it is here, in a few words
    apple_only: bool = False  # MLX weights: Apple silicon (the Linux CPU build runs only the bundled model well)
    min_memory_gb: int = 0  # the machine's memory below which it is not proposed
    measured_here: bool = False


CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        model="mlx-community/Qwen2.5-7B-Instruct-4bit",
        role="generation",
        size_gb=4.3,
        licence="Apache-2.0",
        languages="29 languages, French included",
        source="Qwen (Alibaba), MLX conversion by mlx-community",
        note="the ObsiRAG seed's default: ~25–28 tokens/s on an M5 (published, not measured here)",
        apple_only=True,
        min_memory_gb=16,
    ),
    Candidate(
        model="mlx-community/Mistral-7B-Instruct-v0.3-4bit",
        role="generation",
        size_gb=4.1,
        licence="Apache-2.0",
        languages="English, French and other European languages",
        source="Mistral AI, MLX conversion by mlx-community",
        note="a French publisher's 7B model",
        apple_only=True,
        min_memory_gb=16,
    ),
    Candidate(
        model="mlx-community/Llama-3.2-3B-Instruct-4bit",
        role="generation",
        size_gb=1.8,
        licence="Llama 3.2 Community License",
        languages="8 languages, French included",
        source="Meta, MLX conversion by mlx-community",
        note="for 8 GB Macs",
        apple_only=True,
        min_memory_gb=8,
    ),
    Candidate(
        model="intfloat/multilingual-e5-base",
        role="embedding",
        size_gb=1.1,
        licence="MIT",
        languages="~100 languages",
        source="Microsoft (intfloat)",
        note="the default's larger sibling (768 dims): the same prefixes, more recall",
    ),
    Candidate(
        model="intfloat/multilingual-e5-large",
        role="embedding",
        size_gb=2.2,
        licence="MIT",
        languages="~100 languages",
        source="Microsoft (intfloat)",
        note="the largest e5 (1,024 dims): slowest to index",
    ),
    Candidate(
        model="BAAI/bge-m3",
        role="embedding",
        size_gb=2.3,
        licence="MIT",
        languages="100+ languages",
        source="BAAI",
        note="long passages (8,192 tokens), strong on multilingual benchmarks",
    ),
    Candidate(
        model="cross-encoder/mmarco-mMiniLMv2-L12-H384-v1",
        role="reranking",
        size_gb=0.47,
        licence="Apache-2.0",
        languages="14 languages of mMARCO, French included",
        source="sentence-transformers (cross-encoder)",
        note="small and fast on a CPU",
    ),
    Candidate(
        model="BAAI/bge-reranker-v2-m3",
        role="reranking",
        size_gb=2.3,
        licence="Apache-2.0",
        languages="100+ languages",
        source="BAAI",
        note="the stronger reranker; slow on a CPU over 30 notes",
    ),
)


def candidates(role: Role | None = None, *, apple: bool = False, memory_gb: float | None = None) -> list[Candidate]:
    """The candidates of ``role`` this machine can run: MLX generation models only on Apple silicon
    (``apple``), and only those that fit in ``memory_gb``."""
    return [
        candidate
        for candidate in CANDIDATES
        if (role is None or candidate.role == role)
        and (apple or not candidate.apple_only)
        and (memory_gb is None or candidate.min_memory_gb <= memory_gb)
    ]
