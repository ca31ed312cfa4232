"""Accuracy of the offline reasoner on the development rules, per region, beside leave-one-out and a constant.

    python bench/rules_accuracy.py [FILE ...] [--no-embedder]
    (default: ../shared/data/rules/germany.jsonl and california-dev.jsonl, 71 rules)

Per region and over all, three rows of field accuracies (road type, manipulation, behaviour, triple):

* ``in-sample``: the packaged lexicon, as shipped (it was written with these rules in view);
* ``leave-one-out``: each rule parsed with a lexicon from which every entry written from that rule alone is
  removed (the lexicon's recorded provenance; entries older than those records were written from the German
  rules, so their provenance is the German rules that contain them), and with retrieval that may not see the
  rule; repeats of the rule in the source (ca-06/ca-35, ca-10/ca-45, ca-13/ca-46, ca-16/ca-50) count as the
  rule itself. This is the figure to expect on unseen rules of the same kind;
* ``leave-one-out, strict``: also without every phrase that occurs in no other development rule, general
  vocabulary included (a floor);
* ``constant baseline``: always "any roads" / "a pedestrian" / "slow down";

then the gap between in-sample and leave-one-out, and per region which terms the leave-one-out misses fall on
(predicted term for the reference terms).

Parser and validator are the ones the M-Agent and Validator run (offline parser, deterministic
checks, lowest hallucination score wins), called in-process without the bus, so the figure is the
reasoner's and not the daemon's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tools.common.similarity import Embedder  # noqa: E402
from tools.rules.evaluation import OfflineReasoner, leave_one_out  # noqa: E402
from tools.rules.lexicon import load_lexicon  # noqa: E402
from tools.rules.models import MRFields, TrafficRule  # noqa: E402
from tools.rules.ontology import load_ontology  # noqa: E402
from tools.rules.retrieval import ReferenceRetriever  # noqa: E402
from tools.rules.scoring import ScoreReport, baseline_prediction, score_rules  # noqa: E402

DEFAULT_FILE = ROOT.parent / "shared" / "data" / "rules" / "germany.jsonl"


def load(path: Path) -> tuple[list[TrafficRule], list[list[MRFields]]]:
    rules, refs = [], []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            rules.append(
                TrafficRule(id=row.get("id") or f"rule-{i}", text=row["text"], region=row.get("region") or "germany")
            )
            refs.append([MRFields(**p) for p in row["reference_parsed"]])
    return rules, refs


DEFAULT_FILES = [DEFAULT_FILE, DEFAULT_FILE.with_name("california-dev.jsonl")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--no-embedder", action="store_true", help="skip the MiniLM nearest-label fallback")
    ap.add_argument("--no-retrieval", action="store_true", help="confidence without the reference MRs' vote")
    ap.add_argument("--min-confidence", type=float, default=None, help="the Validator's (default: the config's)")
    args = ap.parse_args()

    ontology = load_ontology()
    lexicon = load_lexicon()
    embedder: Embedder | None = None
    if not args.no_embedder:
        from memory.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    rules: list[TrafficRule] = []
    refs: list[list[MRFields]] = []
    for path in args.files:
        r, rf = load(path)
        rules += r
        refs += rf

    from runners.config import ValidationSettings

    min_conf = ValidationSettings().min_confidence if args.min_confidence is None else args.min_confidence
    retriever = (
        ReferenceRetriever(ontology=ontology, embedder=embedder)
        if embedder is not None and not args.no_retrieval
        else None
    )
    reasoner = OfflineReasoner(ontology, lexicon, embedder, retriever, min_confidence=min_conf)
    reasoner.predict(rules[0])  # warm the label index
    t0 = time.perf_counter()
    shipped = [reasoner.predict(r) for r in rules]
    t_shipped = time.perf_counter() - t0

    # Leave-one-out (tools/rules/evaluation.py): for the rule under test, every lexicon entry written from it alone
    # (its recorded provenance; entries from before the records: the German rules containing them) is dropped, and
    # retrieval may not see it or its repeats. The strict row also drops every phrase occurring in no other
    # development rule, general vocabulary included: a floor.
    loo, removed_total = leave_one_out(
        rules, ontology=ontology, lexicon=lexicon, embedder=embedder, retriever=retriever, min_confidence=min_conf
    )
    strict, _ = leave_one_out(
        rules, ontology=ontology, lexicon=lexicon, embedder=embedder, retriever=retriever, min_confidence=min_conf,
        strict=True,
    )  # fmt: skip

    fields = ("road_type", "manipulation", "expected_behavior", "triple")
    regions = sorted({r.region for r in rules})
    print(f"{len(rules)} development rules ({', '.join(p.name for p in args.files)}); "
          f"embedder: {embedder.name if embedder else 'none'}")  # fmt: skip
    for region in [*regions, "all"]:
        idx = [i for i, r in enumerate(rules) if region in ("all", r.region)]

        def report(preds: list[MRFields | None], idx: list[int] = idx) -> ScoreReport:
            return score_rules(ontology, [(rules[i].id, rules[i].region, preds[i], refs[i]) for i in idx])

        rows = {
            "in-sample (shipped lexicon)": report(shipped),
            "leave-one-out": report(loo),
            "leave-one-out, strict": report(strict),
            "constant baseline": report([baseline_prediction()] * len(rules)),
        }
        none = {"in-sample": sum(shipped[i] is None for i in idx), "leave-one-out": sum(loo[i] is None for i in idx)}
        print(f"\n{region}: {len(idx)} rules (no MR accepted: {none['in-sample']} in-sample, "
              f"{none['leave-one-out']} leave-one-out; minimum confidence {min_conf})")  # fmt: skip
        print(f"{'':30}" + "".join(f"{f:>19}" for f in fields))
        for name, rep in rows.items():
            print(f"{name:30}" + "".join(f"{rep.fraction(f):>19.1%}" for f in fields))
        gap = {f: rows["in-sample (shipped lexicon)"].fraction(f) - rows["leave-one-out"].fraction(f) for f in fields}
        print(f"{'gap (in-sample - LOO)':30}" + "".join(f"{gap[f] * 100:>18.1f}p" for f in fields))
        for name, preds in (("in-sample", shipped), ("leave-one-out", loo)):
            stored = [s for i, s in zip(idx, rows[name if name == "leave-one-out" else "in-sample (shipped lexicon)"].rules,
                                        strict=True) if preds[i] is not None]  # fmt: skip
            right = sum(1 for s in stored if s.triple)
            print(f"  {name}: coverage {len(stored)}/{len(idx)} rules got an MR; precision {right}/{len(stored)} "
                  f"stored MRs right ({right / max(1, len(stored)):.1%}) at minimum confidence {min_conf}")  # fmt: skip
        if region == "all":
            continue
        misses: dict[str, Counter[str]] = {f: Counter() for f in ("road_type", "manipulation", "expected_behavior")}
        for score in rows["leave-one-out"].rules:
            for f in misses:
                if not getattr(score, f):
                    wanted = sorted({ref[f] for ref in score.reference})
                    misses[f][f"{score.predicted.get(f)} for {'/'.join(wanted)}"] += 1
        for f, counter in misses.items():
            if counter:
                top = "; ".join(f"{k} x{n}" if n > 1 else k for k, n in counter.most_common(6))
                print(f"  LOO misses on {f} ({sum(counter.values())}): {top}")
        changed = [rules[i].id for i, a, b in zip(idx, rows["in-sample (shipped lexicon)"].rules,
                                                 rows["leave-one-out"].rules, strict=True) if a.triple and not b.triple]  # fmt: skip
        if changed:
            print("  right only with phrases of their own: " + ", ".join(changed))
    print(
        f"\nleave-one-out removed {removed_total} phrase occurrences in all "
        f"({removed_total / len(rules):.1f} per rule on average)"
    )
    print(f"offline reasoner: {len(rules) / t_shipped:.0f} rules/s, one rule at a time in one process")


if __name__ == "__main__":
    main()
