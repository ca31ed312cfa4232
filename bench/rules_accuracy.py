"""Accuracy of the offline reasoner on the development rules, per region, beside leave-one-out and a constant.

    python bench/rules_accuracy.py [FILE ...] [--no-embedder]
    (default: ../shared/data/rules/germany.jsonl and california-dev.jsonl, 71 rules)

Per region and over all, three rows of field accuracies (road type, manipulation, behaviour, triple):

* ``in-sample``: the packaged lexicon, as shipped (it was written with these rules in view);
* ``leave-one-out``: each rule parsed with a lexicon from which every entry written from that rule alone
  (its recorded provenance) and every phrase occurring in no other development rule are removed; repeats of
  the rule in the source (ca-06/ca-35, ca-10/ca-45, ca-13/ca-46, ca-16/ca-50) count as the rule itself. This
  is the figure to expect on unseen rules of the same kind;
* ``constant baseline``: always "any roads" / "a pedestrian" / "slow down";

then the gap between in-sample and leave-one-out, and per region which terms the leave-one-out misses fall on
(predicted term for the reference terms).

Parser and validator are the ones the M-Agent and Validator run (offline parser, deterministic
checks, lowest hallucination score wins), called in-process without the bus, so the figure is the
reasoner's and not the daemon's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tools.common.similarity import Embedder  # noqa: E402
from tools.common.text import contains_tokens, tokens  # noqa: E402
from tools.rules.lexicon import Lexicon, load_lexicon  # noqa: E402
from tools.rules.models import MRFields, TrafficRule  # noqa: E402
from tools.rules.offline_parser import OntologyGroundedParser  # noqa: E402
from tools.rules.ontology import Ontology, load_ontology  # noqa: E402
from tools.rules.scoring import ScoreReport, baseline_prediction, score_rules  # noqa: E402
from tools.rules.validation import OfflineValidator, choose_best  # noqa: E402

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


class Reasoner:
    """The offline parser and validator over one lexicon."""

    def __init__(self, ontology: Ontology, lexicon: Lexicon, embedder: Embedder | None) -> None:
        self.parser = OntologyGroundedParser(ontology=ontology, lexicon=lexicon, embedder=embedder)
        self.validator = OfflineValidator(ontology=ontology, parser=self.parser)

    def predict(self, rule: TrafficRule) -> MRFields | None:
        verdict = choose_best(self.validator.validate_sync(rule, self.parser.parse(rule)))
        return verdict.candidate.mr if verdict else None


def _filter_phrases(lexicon: Lexicon, keep: Callable[[str], bool]) -> Lexicon:
    """A copy of the lexicon without the phrases ``keep`` rejects (targets themselves stay)."""

    def lists(d: dict[str, list[str]]) -> dict[str, list[str]]:
        return {k: [p for p in v if keep(p)] for k, v in d.items()}

    return dataclasses.replace(
        lexicon,
        manipulation_aliases=lists(lexicon.manipulation_aliases),
        road_type_aliases=lists(lexicon.road_type_aliases),
        implied_manipulations=lists(lexicon.implied_manipulations),
        behavior_cues={b: [(p, w) for p, w in cues if keep(p)] for b, cues in lexicon.behavior_cues.items()},
        ego_phrases=[p for p in lexicon.ego_phrases if keep(p)],
        exclusion_words=[p for p in lexicon.exclusion_words if keep(p)],
        specialised_generics={
            k: v for k, v in lexicon.specialised_generics.items() if keep(f"specialised_generics:{k}")
        },
    )


def all_phrases(lexicon: Lexicon) -> set[str]:
    out: set[str] = set()
    for d in (lexicon.manipulation_aliases, lexicon.road_type_aliases, lexicon.implied_manipulations):
        for v in d.values():
            out.update(v)
    for cues in lexicon.behavior_cues.values():
        out.update(p for p, _ in cues)
    out.update(lexicon.ego_phrases)
    out.update(lexicon.exclusion_words)
    return out


REPEATS = {"ca-06": "ca-35", "ca-10": "ca-45", "ca-13": "ca-46", "ca-16": "ca-50"}  # shared/data README
DEFAULT_FILES = [DEFAULT_FILE, DEFAULT_FILE.with_name("california-dev.jsonl")]


def repeats_of(rule_id: str) -> set[str]:
    """The rule and the rules that repeat it in the source (kept on one side of every split)."""
    out = {rule_id}
    for a, b in REPEATS.items():
        if rule_id in (a, b):
            out |= {a, b}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--no-embedder", action="store_true", help="skip the MiniLM nearest-label fallback")
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
    texts = [tokens(r.text) for r in rules]

    reasoner = Reasoner(ontology, lexicon, embedder)
    reasoner.predict(rules[0])  # warm the label index
    t0 = time.perf_counter()
    shipped = [reasoner.predict(r) for r in rules]
    t_shipped = time.perf_counter() - t0

    # Leave-one-out drops, for the rule under test, (a) every phrase written from it alone (the lexicon's
    # provenance: dev rule ids) and (b) every phrase that occurs in no other development rule of any region,
    # whatever its recorded source: (b) is stricter than provenance alone, so the row is a conservative estimate.
    phrases = {p: tokens(p) for p in all_phrases(lexicon)}
    occurs = {p: {i for i, t in enumerate(texts) if w and contains_tokens(t, w) >= 0} for p, w in phrases.items()}
    loo: list[MRFields | None] = []
    removed_total = 0
    for rule in rules:
        own = {j for j, r in enumerate(rules) if r.id in repeats_of(rule.id)}
        only_here = {p for p, where in occurs.items() if where and where <= own}
        only_here |= {p for p, ids in lexicon.provenance.items() if ids and set(ids) <= repeats_of(rule.id)}
        removed_total += len(only_here)
        reduced = _filter_phrases(lexicon, lambda p, drop=only_here: p not in drop)
        loo.append(Reasoner(ontology, reduced, embedder).predict(rule))

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
            "constant baseline": report([baseline_prediction()] * len(rules)),
        }
        print(f"\n{region}: {len(idx)} rules")
        print(f"{'':30}" + "".join(f"{f:>19}" for f in fields))
        for name, rep in rows.items():
            print(f"{name:30}" + "".join(f"{rep.fraction(f):>19.1%}" for f in fields))
        gap = {f: rows["in-sample (shipped lexicon)"].fraction(f) - rows["leave-one-out"].fraction(f) for f in fields}
        print(f"{'gap (in-sample - LOO)':30}" + "".join(f"{gap[f] * 100:>18.1f}p" for f in fields))
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
