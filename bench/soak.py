"""Soak: a daemon in its own process under a fixed mixed load for N minutes: memory, queues, latency, nothing lost.

    python bench/soak.py [--minutes 30] [--warmup 5] [--rate rules=30] [--rate crash=1] [--rate tl=1]
                         [--crash-cases 3] [--tl-images 4] [--no-render] [--drain 600] [--rules-file PATH]

Starts ``drivemt daemon`` (``bench/_daemon.py``, default configuration, a fresh data dir) and submits, through the
clients' own event builders and result collectors (``runners.clients``), at a fixed rate per minute each:

* ``rules``: one rule per submission, cycling over ``--rules-file`` (AutoMT's German rules);
* ``crash``: one crash report per submission (a batch of one), cycling over the ``--crash-cases`` dev cases with
  the fewest vehicles, simulated in MetaDrive with the IDM ego, one variant (pictures drawn unless ``--no-render``);
* ``tl``: one synthetic traffic-light dataset of ``--tl-images`` 640x360 images (``tools.tl.synth``), all
  twelve transformations, no detector.

Each submission is its own correlation id; one subscription per result subject routes every result to its
submission, and latency is first publish -> final result (rules: the MR accepted or rejected, or an error; crash:
the case's verdict; tl: the augmented set) as this client sees it. Every minute one line: RSS of the daemon, of
its other children (simulator workers) and of its nats-server; every durable consumer's queue (pending /
ack-pending, the figures ``drivemt status`` shows, from ``runners.clients.ops.collect_status``); per pipeline the
submissions and results of that minute, the open ones, and latency p50 / p99 of the results of that minute.

When the time is up the load stops and the daemon may finish what is open (``--drain`` seconds). Goals (the exit
status is 1 when one fails):

* nothing lost: every submission has its final result;
* memory: mean RSS over the last minute within +-10 % of the mean over the first minute after ``--warmup``, for
  the daemon and for the daemon with its workers (nats-server shown apart);
* pending work: per pipeline, the open submissions grow after warm-up (least squares over the samples taken every
  ``--sample`` seconds) by at most 10 % of the offered rate, or by one submission over the window, whichever is
  more; the trend of the JetStream queues (pending + ack-pending, summed) is shown beside.

A 30-minute soak is the figure; ``--minutes 2 --warmup 0.5`` checks that the bench works.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil
from _daemon import SpawnedDaemon, spawned_daemon  # bench/ is on the path when a bench runs

from bus import (
    Bus,
    ErrorDomain,
    ErrorReported,
    Event,
    EventValidationError,
    Subjects,
    TLAugmented,
    TLDatasetSubmitted,
    TLVerdict,
    decode_event,
)
from bus.events import TLDatasetPayload
from runners.cli.logs import configure_logging
from runners.clients.crash import CrashBatch, CrashResults, make_crash_submissions
from runners.clients.ops import collect_status
from runners.clients.rules import RulesResults, make_submissions
from runners.clients.tl import TLOutcome
from tools.crash.extract import OfflineCrashExtractor
from tools.crash.files import CrashReport, find_cases, read_case
from tools.crash.models import SimOptions
from tools.rules.files import read_rules_file
from tools.rules.models import TrafficRule
from tools.tl.synth import synth_tl

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RULES = ROOT.parent / "shared" / "data" / "rules" / "germany.jsonl"
DEFAULT_CRASHES = ROOT.parent / "shared" / "data" / "crashes" / "dev"
PIPELINES = ("rules", "crash", "tl")
DEFAULT_RATES = {"rules": 30.0, "crash": 1.0, "tl": 1.0}
RSS_GOAL = 0.10  # the RSS after warm-up stays within +-10 %
TREND_GOAL = 0.10  # open work grows by at most 10 % of the offered rate
MB = 1024 * 1024


@dataclass
class Submission:
    """One submission (one correlation id) and, once in, its final result."""

    pipeline: str
    key: str
    on_event: Callable[[Event], None]
    complete: Callable[[], bool]
    outcome: Callable[[], str]
    submitted: float = 0.0
    finished: float | None = None
    result: str = ""

    @property
    def latency(self) -> float:
        """Seconds from publish to the final result."""
        return (self.finished or time.monotonic()) - self.submitted


class Tracker:
    """Every submission, its results routed to it by correlation id from one subscription per result subject."""

    def __init__(self, bus: Bus) -> None:
        self.bus = bus
        self.all: list[Submission] = []
        self.open: dict[str, Submission] = {}
        self.publish_errors: list[str] = []

    async def start(self) -> None:
        """Subscribe to every subject a result of the three pipelines comes on (before the first publish)."""
        s = self.bus.subjects
        tl = [s.tl_augmented, s.tl_verdict, s.errors(ErrorDomain.TL), s.errors(ErrorDomain.JUDGE)]
        for subject in dict.fromkeys(RulesResults.subjects(s) + CrashResults.subjects(s) + tl):
            await self.bus.nc.subscribe(subject, cb=self._on_msg)

    async def _on_msg(self, msg: Any) -> None:
        try:
            event = decode_event(msg.data, subject=msg.subject)
        except EventValidationError:
            return
        sub = self.open.get(event.correlation_id)
        if sub is None:
            return
        sub.on_event(event)
        if sub.complete():
            sub.finished = time.monotonic()
            sub.result = sub.outcome()
            del self.open[event.correlation_id]

    async def submit(self, correlation: str, sub: Submission, publish: Awaitable[Any]) -> None:
        """Register the submission, then publish it."""
        self.all.append(sub)
        self.open[correlation] = sub
        sub.submitted = time.monotonic()
        await publish

    def backlog(self, pipeline: str) -> int:
        """Submissions of a pipeline without their final result."""
        return sum(s.pipeline == pipeline for s in self.open.values())


@dataclass
class Load:
    """What is submitted: rules, crash reports, a traffic-light dataset."""

    rules: list[str]
    crashes: list[CrashReport]
    tl_dataset: Path
    simulate: SimOptions


def rule_submission(tracker: Tracker, load: Load, k: int) -> Awaitable[None]:
    rule = TrafficRule(id=f"soak-{k:06d}", text=load.rules[k % len(load.rules)], region="germany")
    correlation, events = make_submissions([rule], producer="soak", source="soak")
    results = RulesResults({rule.id})
    sub = Submission("rules", rule.id, results.on_event, results.complete, lambda: results.results[rule.id].kind)
    return tracker.submit(correlation, sub, tracker.bus.publish_many(events))


def crash_submission(tracker: Tracker, load: Load, k: int) -> Awaitable[None]:
    report = load.crashes[k % len(load.crashes)]
    correlation, events = make_crash_submissions([report], simulate=load.simulate, producer="soak", source="soak")
    batch = CrashBatch(correlation_id=correlation, case_ids=[report.case_id])
    results = CrashResults(batch, events)

    def outcome() -> str:
        return "verdict" if batch.verdicts else "error"

    sub = Submission("crash", f"{report.case_id}#{k}", results.on_event, lambda: batch.complete, outcome)
    return tracker.submit(correlation, sub, tracker.bus.publish_many(events))


def tl_submission(tracker: Tracker, load: Load, k: int) -> Awaitable[None]:
    event = TLDatasetSubmitted(
        producer="soak", payload=TLDatasetPayload(dataset=str(load.tl_dataset), seed=k, name=f"soak-{k}")
    )
    outcome = TLOutcome(submitted=event)

    def on_event(ev: Event) -> None:  # what runners.clients.tl.wait_for_tl keeps
        if isinstance(ev, TLAugmented):
            outcome.augmented = ev
        elif isinstance(ev, TLVerdict):
            outcome.verdict = ev
        elif isinstance(ev, ErrorReported):
            outcome.errors.append(ev)

    sub = Submission(
        "tl",
        f"tl#{k}",
        on_event,
        lambda: outcome.complete,
        lambda: "error" if outcome.errors else "augmented",
    )
    return tracker.submit(event.correlation_id, sub, tracker.bus.publish(event))


SUBMITTERS: dict[str, Callable[[Tracker, Load, int], Awaitable[None]]] = {
    "rules": rule_submission,
    "crash": crash_submission,
    "tl": tl_submission,
}


async def feed(tracker: Tracker, load: Load, pipeline: str, per_min: float, start: float, stop: float) -> None:
    """Submit at a fixed rate from ``start`` until ``stop`` (monotonic); the pipelines' phases are staggered."""
    interval = 60.0 / per_min
    phase = interval * PIPELINES.index(pipeline) / len(PIPELINES)
    k = 0
    while (due := start + phase + k * interval) < stop:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        try:
            await SUBMITTERS[pipeline](tracker, load, k)
        except Exception as exc:  # the submission stays open, so it counts as lost; the run goes on
            tracker.publish_errors.append(f"{pipeline} #{k}: {type(exc).__name__}: {exc}")
        k += 1


@dataclass
class Sample:
    """One look at the daemon's processes and the open work, ``t`` minutes into the load."""

    t: float
    daemon: int
    workers: int
    n_workers: int
    nats: int
    backlog: dict[str, int]


def rss(daemon: SpawnedDaemon) -> tuple[int, int, int, int]:
    """Bytes: the daemon, its other children (simulator workers and their helpers), how many, its nats-server."""
    proc = psutil.Process(daemon.proc.pid)
    own = proc.memory_info().rss
    workers = n = nats = 0
    for child in proc.children(recursive=True):
        try:
            size = child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
        if child.pid == daemon.state.nats_pid:
            nats += size
        else:
            workers += size
            n += 1
    return own, workers, n, nats


def short_names(names: list[str]) -> dict[str, str]:
    """Short, unique names for the consumers (initials of the words, longer where two would be the same)."""
    out: dict[str, str] = {}
    for name in names:
        parts = name.split("-")
        for extra in range(0, 12):
            short = "".join(p[0] for p in parts[:-1]) + parts[-1][: 1 + extra]
            if short not in out.values():
                break
        out[name] = short
    return out


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of ``(x, y)`` points (None with fewer than two distinct x)."""
    if len({x for x, _ in points}) < 2:
        return None
    mx, my = statistics.fmean(x for x, _ in points), statistics.fmean(y for _, y in points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def prepare(args: argparse.Namespace, tmp: Path) -> Load:
    """The rules' texts, the smallest crash cases, and one synthetic traffic-light dataset (before the clock)."""
    rules = [r.text for r in read_rules_file(args.rules_file, region="germany")]
    extractor = OfflineCrashExtractor()
    reports = [read_case(folder) for folder in find_cases(args.crashes)]
    sized = sorted(reports, key=lambda r: (len(extractor.extract(r).actors), r.case_id))
    crashes = sized[: args.crash_cases]
    ds = tmp / "tl"
    synth_tl(ds, n_train=0, n_val=0, n_test=args.tl_images, seed=7)
    simulate = SimOptions(variants=1, policies=["idm"], render=not args.no_render)
    return Load(rules=rules, crashes=crashes, tl_dataset=ds, simulate=simulate)


async def minute_line(
    m: int, start: float, tracker: Tracker, daemon: SpawnedDaemon, names: dict[str, str], queue_log: list[Any]
) -> str:
    """The line of minute ``m`` (1-based), now that it has ended."""
    try:
        own, workers, n, nats = rss(daemon)
    except psutil.NoSuchProcess:  # the daemon is gone; the next minute says so
        own = workers = n = nats = 0
    try:
        status = await asyncio.wait_for(collect_status(tracker.bus), 30)
    except Exception as exc:  # a bus that stopped answering is shown, and the soak goes on to its verdict
        queue_text = f"queues unavailable ({type(exc).__name__})"
    else:
        queues = {c["name"]: (c["pending"], c["ack_pending"]) for c in status["consumers"]}
        queue_log.append(((time.monotonic() - start) / 60.0, sum(p + a for p, a in queues.values())))
        if not names:
            names.update(short_names(sorted(queues)))
        queue_text = (
            "queues "
            + " ".join(f"{names.get(q, q)} {p}/{a}" for q, (p, a) in sorted(queues.items()))
            + f" dl {status['deadletters']}"
        )
    lo, hi = start + 60.0 * (m - 1), start + 60.0 * m
    parts = [
        f"min {m:3d}",
        f"rss daemon {own / MB:6.0f} MB, workers {workers / MB:5.0f} MB ({n} proc), nats {nats / MB:4.0f} MB",
        queue_text,
    ]
    for pipeline in PIPELINES:
        subs = [s for s in tracker.all if s.pipeline == pipeline]
        if not subs:
            continue
        new = sum(lo <= s.submitted < hi for s in subs)
        done = [s.latency for s in subs if s.finished is not None and lo <= s.finished < hi]
        lat = f"p50 {statistics.median(done):6.2f} p99 {pct(done, 0.99):6.2f} s" if done else f"{'-':>22}"
        parts.append(f"{pipeline} {new:3d} in {len(done):3d} out {tracker.backlog(pipeline):3d} open {lat}")
    return " | ".join(parts)


async def sampler(daemon: SpawnedDaemon, tracker: Tracker, start: float, every: float, out: list[Sample]) -> None:
    """RSS and open work every ``every`` seconds, until cancelled."""
    while daemon.proc.poll() is None:
        try:
            own, workers, n, nats = rss(daemon)
        except psutil.NoSuchProcess:
            return
        backlog = {p: tracker.backlog(p) for p in PIPELINES}
        out.append(Sample((time.monotonic() - start) / 60.0, own, workers, n, nats, backlog))
        await asyncio.sleep(every)


def window_mean(samples: list[Sample], lo: float, hi: float, pick: Callable[[Sample], float]) -> float | None:
    vals = [pick(s) for s in samples if lo <= s.t <= hi]
    return statistics.fmean(vals) if vals else None


def report(
    args: argparse.Namespace, tracker: Tracker, samples: list[Sample], queue_log: list[Any], drained: float
) -> list[str]:
    """Print the goals; returns the ones that failed."""
    failed: list[str] = []
    print()
    lost = [s for s in tracker.all if s.finished is None]
    counts = []
    for pipeline in PIPELINES:
        subs = [s for s in tracker.all if s.pipeline == pipeline]
        if not subs:
            continue
        outcomes: dict[str, int] = {}
        for s in subs:
            if s.finished is not None:
                outcomes[s.result] = outcomes.get(s.result, 0) + 1
        lat = [s.latency for s in subs if s.finished is not None]
        whole = f", latency p50 {statistics.median(lat):.2f} s p99 {pct(lat, 0.99):.2f} s" if lat else ""
        counts.append(f"{pipeline} {sum(s.finished is not None for s in subs)}/{len(subs)} {outcomes}{whole}")
    print(f"results after the load stopped (drained in {drained:.1f} s): " + "; ".join(counts))
    if tracker.publish_errors:
        print(f"{len(tracker.publish_errors)} submission(s) not published, e.g. {tracker.publish_errors[0]}")
    ok = not lost
    print(
        f"nothing lost: {'ok' if ok else 'FAILED'}"
        + (f" ({len(lost)} without a result: {', '.join(s.key for s in lost[:10])})" if lost else "")
    )
    if not ok:
        failed.append("lost")

    warm, end = args.warmup, args.minutes
    width = min(1.0, (end - warm) / 2)
    base_lo, base_hi, last_lo = warm, warm + width, end - width
    rows = (
        ("daemon", lambda s: float(s.daemon), True),
        ("daemon + workers", lambda s: float(s.daemon + s.workers), True),
        ("nats-server", lambda s: float(s.nats), False),
    )
    for label, pick, goal in rows:
        before, after = window_mean(samples, base_lo, base_hi, pick), window_mean(samples, last_lo, end, pick)
        if not before or after is None:
            print(f"RSS {label}: too few samples after warm-up")
            continue
        growth = after / before - 1
        verdict = ("ok" if abs(growth) <= RSS_GOAL else "FAILED") if goal else "(shown apart)"
        print(
            f"RSS {label:<17} min {base_lo:.1f}-{base_hi:.1f} {before / MB:7.0f} MB -> min {last_lo:.1f}-{end:.1f} "
            f"{after / MB:7.0f} MB: {growth:+6.1%}  goal +-{RSS_GOAL:.0%} {verdict}"
        )
        if goal and abs(growth) > RSS_GOAL:
            failed.append(f"rss {label}")

    span = end - warm
    for pipeline in PIPELINES:
        rate = args.rates.get(pipeline, 0.0)
        if rate <= 0:
            continue
        pts = [(s.t, float(s.backlog[pipeline])) for s in samples if warm <= s.t <= end]
        k = slope(pts)
        allowed = max(TREND_GOAL * rate, 1.0 / span)
        if k is None:
            print(f"open {pipeline}: too few samples after warm-up")
            continue
        verdict = "ok" if k <= allowed else "FAILED"
        print(
            f"open {pipeline:<5} after warm-up: {k:+7.2f} per min (offered {rate:g}/min; goal <= {allowed:.2f}) "
            f"{verdict}; mean {statistics.fmean(y for _, y in pts):.1f} open"
        )
        if k > allowed:
            failed.append(f"trend {pipeline}")
    q = slope([(t, float(v)) for t, v in queue_log if warm <= t <= end + 0.01])
    print(
        "JetStream queues (pending + ack-pending, all consumers) after warm-up: "
        + (f"{q:+.2f} messages per min" if q is not None else "too few minutes")
        + f"; at the end of the load {queue_log[-1][1] if queue_log else '-'}"
    )
    return failed


async def run(args: argparse.Namespace, tmp: Path) -> list[str]:
    t = time.perf_counter()
    load = prepare(args, tmp)
    print(
        f"load: {len(load.rules)} rule texts, crash cases {[r.case_id for r in load.crashes]} (K=1, idm, "
        f"render {'off' if args.no_render else 'on'}), {args.tl_images} synthetic TL images x 12 transformations; "
        f"rates per minute {args.rates}; prepared in {time.perf_counter() - t:.1f} s"
    )
    data = tmp / "data"
    extra = ["--log-level", args.log_level] if args.log_level else []
    async with spawned_daemon(data, tmp / "daemon.log", extra=extra) as daemon:
        print(f"daemon up after {time.monotonic() - daemon.spawned:.1f} s (pid {daemon.proc.pid})")
        async with Bus(url=daemon.state.nats_url, subjects=Subjects(daemon.state.namespace), name="soak") as bus:
            tracker = Tracker(bus)
            await tracker.start()
            names: dict[str, str] = {}
            samples: list[Sample] = []
            queue_log: list[Any] = []
            start = time.monotonic()
            stop = start + 60.0 * args.minutes
            feeds = [
                asyncio.create_task(feed(tracker, load, p, r, start, stop)) for p, r in args.rates.items() if r > 0
            ]
            sampling = asyncio.create_task(sampler(daemon, tracker, start, args.sample, samples))
            printed_legend = False
            died: list[str] = []
            for m in range(1, int(args.minutes + 0.999) + 1):
                await asyncio.sleep(max(0.0, min(start + 60.0 * m, stop) - time.monotonic()))
                if (rc := daemon.proc.poll()) is not None:
                    died.append(f"daemon exited with status {rc} in minute {m}")
                    print(died[-1] + f" (see {tmp / 'daemon.log'}; keep it with --keep DIR)")
                    break
                line = await minute_line(m, start, tracker, daemon, names, queue_log)
                if not printed_legend:
                    print(
                        "queues: pending/ack-pending per durable consumer: "
                        + ", ".join(f"{v}={k}" for k, v in names.items())
                    )
                    printed_legend = True
                print(line, flush=True)
            sampling.cancel()
            for task in feeds:
                if died:
                    task.cancel()
            await asyncio.gather(*feeds, return_exceptions=True)
            t_stop = time.monotonic()
            while tracker.open and not died and time.monotonic() - t_stop < args.drain:
                await asyncio.sleep(0.2)
            drained = time.monotonic() - t_stop
            return died + report(args, tracker, samples, queue_log, drained)


def parse_rates(values: list[str] | None) -> dict[str, float]:
    rates = dict(DEFAULT_RATES)
    for item in values or []:
        name, _, value = item.partition("=")
        if name not in PIPELINES or not value:
            raise SystemExit(f"--rate takes PIPELINE=PER_MINUTE with PIPELINE one of {PIPELINES}, not {item!r}")
        rates[name] = float(value)
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=30.0, help="Minutes of load.")
    ap.add_argument("--warmup", type=float, default=None, help="Minutes before the memory baseline (min(5, N/4)).")
    ap.add_argument(
        "--rate",
        action="append",
        metavar="PIPELINE=PER_MIN",
        help=f"Submissions per minute of rules, crash or tl (defaults {DEFAULT_RATES}; 0 turns one off).",
    )
    ap.add_argument("--rules-file", type=Path, default=DEFAULT_RULES)
    ap.add_argument("--crashes", type=Path, default=DEFAULT_CRASHES, help="A folder of crash case folders.")
    ap.add_argument("--crash-cases", type=int, default=3, help="How many cases (those with the fewest vehicles).")
    ap.add_argument("--tl-images", type=int, default=4, help="Images per traffic-light submission.")
    ap.add_argument("--no-render", action="store_true", help="No PNG and GIF per crash run.")
    ap.add_argument("--sample", type=float, default=5.0, help="Seconds between RSS and open-work samples.")
    ap.add_argument("--keep", type=Path, default=None, help="Work here and keep it (daemon.log, data dir).")
    ap.add_argument("--log-level", default=None, help="The daemon's log level (warning; its log is daemon.log).")
    ap.add_argument("--drain", type=float, default=600.0, help="Seconds the daemon may take after the load stops.")
    args = ap.parse_args()
    args.rates = parse_rates(args.rate)
    if args.warmup is None:
        args.warmup = min(5.0, args.minutes / 4)
    if not 0 <= args.warmup < args.minutes:
        raise SystemExit("--warmup must be shorter than --minutes")
    configure_logging("warning", "console")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        failed = asyncio.run(run(args, args.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="drivemt-soak-") as tmp:
            failed = asyncio.run(run(args, Path(tmp)))
    print(f"soak: {'every goal met' if not failed else 'FAILED: ' + ', '.join(failed)}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
