"""Accuracy of the offline reasoner on rules with reference MRs, plus a leave-one-out estimate.

    python bench/rules_accuracy.py [../shared/data/rules/germany.jsonl] [--no-embedder]

Prints three rows of field accuracies (road type, manipulation, behaviour, triple):

* ``drivemt``: the packaged lexicon, as shipped;
* ``leave-one-out``: for each rule, every lexicon phrase that occurs in that rule's text and in no
  other rule of the file is removed before the rule is parsed, so no rule is helped by a phrase that
  only it justifies (the lexicon is meant to hold general traffic vocabulary; this row shows how much
  of the score depends on phrases seen in one development rule only);
* ``constant baseline``: always "any roads" / "a pedestrian" / "slow down".

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
    )


def all_phrases(lexicon: Lexicon) -> set[str]:
    out: set[str] = set()
    for d in (lexicon.manipulation_aliases, lexicon.road_type_aliases, lexicon.implied_manipulations):
        for v in d.values():
            out.update(v)
    for cues in lexicon.behavior_cues.values():
        out.update(p for p, _ in cues)
    out.update(lexicon.ego_phrases)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    ap.add_argument("--no-embedder", action="store_true", help="skip the MiniLM nearest-label fallback")
    args = ap.parse_args()

    ontology = load_ontology()
    lexicon = load_lexicon()
    embedder: Embedder | None = None
    if not args.no_embedder:
        from memory.embeddings import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    rules, refs = load(args.file)
    texts = [tokens(r.text) for r in rules]

    reasoner = Reasoner(ontology, lexicon, embedder)
    reasoner.predict(rules[0])  # warm the label index
    t0 = time.perf_counter()
    shipped = [reasoner.predict(r) for r in rules]
    t_shipped = time.perf_counter() - t0

    phrases = {p: tokens(p) for p in all_phrases(lexicon)}
    occurs = {p: {i for i, t in enumerate(texts) if w and contains_tokens(t, w) >= 0} for p, w in phrases.items()}
    loo: list[MRFields | None] = []
    removed_total = 0
    for i, rule in enumerate(rules):
        only_here = {p for p, where in occurs.items() if where == {i}}
        removed_total += len(only_here)
        reduced = _filter_phrases(lexicon, lambda p, drop=only_here: p not in drop)
        loo.append(Reasoner(ontology, reduced, embedder).predict(rule))

    def report(preds: list[MRFields | None]) -> ScoreReport:
        return score_rules(ontology, [(r.id, r.region, p, rf) for r, p, rf in zip(rules, preds, refs, strict=True)])

    rows = {
        "drivemt (shipped lexicon)": report(shipped),
        "leave-one-out": report(loo),
        "constant baseline": report([baseline_prediction()] * len(rules)),
    }
    fields = ("road_type", "manipulation", "expected_behavior", "triple")
    print(f"{args.file.name}: {len(rules)} rules; embedder: {embedder.name if embedder else 'none'}")
    print(f"{'':28}" + "".join(f"{f:>19}" for f in fields))
    for name, rep in rows.items():
        print(f"{name:28}" + "".join(f"{rep.fraction(f):>19.1%}" for f in fields))
    print(
        f"\nleave-one-out removed {removed_total} phrase occurrences in all "
        f"({removed_total / len(rules):.1f} per rule on average)"
    )
    print(f"offline reasoner: {len(rules) / t_shipped:.0f} rules/s, one rule at a time in one process")
    pairs = zip(rules, rows["drivemt (shipped lexicon)"].rules, rows["leave-one-out"].rules, strict=True)
    changed = [r.id for r, a, b in pairs if a.triple and not b.triple]
    if changed:
        print("rules right only with their own phrases: " + ", ".join(changed))


if __name__ == "__main__":
    main()
