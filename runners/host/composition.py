"""The composition root: builds every part (ontology, parsers, validators, extractors, stores, agents) from the configuration.

The daemon and the in-process CLI run use the same assembly, so what ``drivemt rules extract`` does
is exactly what a daemon does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from agents.crash.extractor import CrashExtractorAgent
from agents.crash.planner import SimPlannerAgent
from agents.crash.sim_runner import SimRunnerAgent
from agents.judge import JudgeAgent
from agents.mt.f_agent import FAgent
from agents.mt.t_agent import TAgent
from agents.mt.validity import ValidityAgent
from agents.rules.m_agent import MAgent
from agents.rules.validator import ValidatorAgent
from agents.runtime import Agent
from agents.tl.augmenter import TLAugmenterAgent
from bus import Bus
from memory.embeddings import MiniLMEmbedder
from memory.mr_store import QdrantMRStore, StoreSettings
from memory.templates import TemplateStore
from runners.clients.memory import BusMRStore, BusTemplates
from runners.config import DrivemtConfig, api_key_for, qdrant_api_key
from tools.common.artifacts import ArtifactStore, LocalArtifactStore
from tools.common.llm import build_model_client, crash_extractor_model, describer_model
from tools.common.models import Provenance
from tools.common.similarity import Embedder
from tools.crash.llm_extractor import LLMCrashExtractor
from tools.mt.diffusion import DiffusionGenerator
from tools.mt.llm_describer import LLMDescriber
from tools.rules.lexicon import load_lexicon
from tools.rules.llm_parser import LLMRuleParser
from tools.rules.llm_validator import LLMSelfCheckValidator
from tools.rules.offline_parser import OntologyGroundedParser
from tools.rules.ontology import Ontology, load_ontology
from tools.rules.retrieval import ReferenceRetriever
from tools.rules.tools import RuleToolContext
from tools.rules.validation import MRValidator, OfflineValidator

__all__ = ["Composition"]

log = structlog.get_logger(__name__)


class Composition:
    """Every agent of the daemon, and the parts they share, built from the configuration.

    Args:
        config: The configuration.
        embedder: An embedder to share (a new MiniLM one if omitted).
        model_clients: Model clients by ``provider:model`` label, to use instead of building them
            (tests pass autogen replay clients here).
        store_settings: Where the MR store lives (from the config if omitted).
    """

    def __init__(
        self,
        config: DrivemtConfig,
        *,
        embedder: Embedder | None = None,
        model_clients: Mapping[str, Any] | None = None,
        store_settings: StoreSettings | None = None,
    ) -> None:
        self.config = config
        self.ontology: Ontology = load_ontology(config.ontology_files + self._accepted_extension())
        self.lexicon = load_lexicon(config.lexicon_file)
        self.embedder: Embedder = embedder or MiniLMEmbedder(
            device=config.embedder.device, batch_size=config.embedder.batch_size
        )
        self.offline_parser = OntologyGroundedParser(
            ontology=self.ontology,
            lexicon=self.lexicon,
            embedder=self.embedder,
            semantic_threshold=config.embedder.semantic_threshold,
        )
        self.offline_validator = OfflineValidator(
            ontology=self.ontology,
            parser=self.offline_parser,
            min_score=config.validation.min_score,
            retriever=ReferenceRetriever(ontology=self.ontology, embedder=self.embedder),
            min_confidence=config.validation.min_confidence,
        )
        self.tool_context = RuleToolContext(self.ontology, self.offline_parser, self.offline_validator)
        injected = dict(model_clients or {})  # (tests and embedders give clients by label)
        built: dict[str, Any] = {}

        def client_for(model: Any) -> Any:
            if model.label in injected:
                return injected[model.label]
            # One client per configuration, not per label: one model name on two servers, or with its own timeout,
            # retries or temperature for one step, keeps what that step's configuration says.
            key = model.model_dump_json()
            if key not in built:
                built[key] = build_model_client(model, api_key=api_key_for(model))
            return built[key]

        llm = config.llm
        self.llm_parsers = [
            LLMRuleParser(
                model_client=client_for(m), label=m.label, ontology=self.ontology, tool_context=self.tool_context
            )
            for m in llm.parsers
        ]
        self.validator: MRValidator = (
            LLMSelfCheckValidator(
                model_client=client_for(llm.validator),
                label=llm.validator.label,
                offline=self.offline_validator,
                samples=llm.samples,
                min_score=config.validation.min_score,
            )
            if llm.validator is not None
            else self.offline_validator
        )
        crash_model = crash_extractor_model(llm)
        # The crash extractor: a model when one is configured (else the offline rules, its fallback too).
        self.crash_extractor = (
            LLMCrashExtractor(model_client=client_for(crash_model), label=crash_model.label)
            if crash_model is not None
            else None
        )
        describer = describer_model(llm)
        self.describer = (
            LLMDescriber(model_client=client_for(describer), label=describer.label) if describer is not None else None
        )
        self.model_clients = injected | built  # (closed at the end)
        # Follow-ups by diffusion models: the folders and the device are checked now, so a daemon that cannot
        # run them refuses to start with the reason, instead of failing case by case.
        self.diffusion: DiffusionGenerator | None = None
        if config.generation.generator == "diffusers":
            self.diffusion = DiffusionGenerator(config.generation.diffusers)
            self.diffusion.preflight()
        models = [p.name for p in self.llm_parsers]
        if llm.include_offline_parser or not self.llm_parsers:
            models.append(self.offline_parser.name)
        models += [self.validator.name, self.embedder.name]
        self.provenance = Provenance(
            config_hash=config.hash, ontology_hash=self.ontology.hash, models=models, seed=config.seed
        )
        self.crash_provenance = Provenance(config_hash=config.hash, ontology_hash="", models=[], seed=config.seed)
        # With memory 'own' this process opens the store (and serves it on the bus); with 'bus' it has none and
        # calls the owner's service once the bus is up (start_memory).
        self.own_store: QdrantMRStore | None = None
        self.own_templates: TemplateStore | None = None
        if config.memory == "own":
            self.own_store = QdrantMRStore(
                settings=store_settings
                or StoreSettings(path=config.qdrant_path, url=config.qdrant_url, api_key=qdrant_api_key()),
                embedder=self.embedder,
            )
            self.own_templates = TemplateStore(store=self.own_store)
        self._store: QdrantMRStore | BusMRStore | None = self.own_store
        self._templates: TemplateStore | BusTemplates | None = self.own_templates
        # Local by default; the daemon puts an Object Store here with artifacts 'bus' (before agents() is called).
        self.artifacts: ArtifactStore = LocalArtifactStore(config.runs_dir)

    @property
    def store(self) -> QdrantMRStore | BusMRStore:
        """The MR store the agents use: this process's own, or the owner's over the bus."""
        if self._store is None:
            raise RuntimeError("the memory is not started: call start_memory(bus) first")
        return self._store

    @property
    def templates(self) -> TemplateStore | BusTemplates:
        """The scenario templates the crash extractor reads."""
        if self._templates is None:
            raise RuntimeError("the memory is not started: call start_memory(bus) first")
        return self._templates

    async def start_memory(self, bus: Bus | None = None) -> None:
        """Open the MR store and the scenario templates that share its client, or, with memory 'bus', reach the
        owner's over ``bus``."""
        if self.own_store is not None and self.own_templates is not None:
            await self.own_store.start()
            await self.own_templates.start()
            return
        if bus is None:
            raise RuntimeError("memory 'bus' needs a connected bus")
        self._store, self._templates = BusMRStore(bus), BusTemplates(bus)

    def _accepted_extension(self) -> list[Any]:
        path = self.config.data_dir / "ontology" / "accepted.yaml"
        return [path] if path.is_file() else []

    def start_loading_models(self) -> None:
        """Start loading the embedding model in the background (a no-op for injected embedders)."""
        start = getattr(self.embedder, "start_loading", None)
        if callable(start):
            start()

    def agents(self, bus: Bus) -> list[tuple[str, Callable[[], Agent]]]:
        """``(settings key, factory)`` for every agent; the daemon calls the factory once per copy.

        Agents without per-copy state share one instance; each SimRunner copy owns a simulator process.
        """
        use_offline = self.config.llm.include_offline_parser or not self.llm_parsers
        conversation = self.config.conversation.enabled
        m_agent = MAgent(
            ontology=self.ontology,
            offline_parser=self.offline_parser if use_offline else None,
            llm_parsers=self.llm_parsers,
            provenance=self.provenance,
            conversation=conversation,
        )
        validator = ValidatorAgent(
            validator=self.validator,
            store=self.store,
            ontology=self.ontology,
            provenance=self.provenance,
            conversation=conversation,
        )
        extractor = CrashExtractorAgent(
            templates=self.templates,
            provenance=self.crash_provenance,
            llm=self.crash_extractor,
            conversation=conversation,
        )
        planner = SimPlannerAgent(store=self.artifacts)
        judge = JudgeAgent(bus=bus, store=self.artifacts, mt=self.config.mt_judge)
        augmenter = TLAugmenterAgent(bus=bus, store=self.artifacts)
        t_agent = TAgent(store=self.artifacts, llm=self.describer, conversation=conversation)
        f_agent = FAgent(bus=bus, store=self.artifacts, ontology=self.ontology, diffusion=self.diffusion)
        checker = ValidityAgent(store=self.artifacts)
        copies = iter(range(1, 1_000_000))
        return [
            ("m_agent", lambda: m_agent),
            ("validator", lambda: validator),
            ("crash_extractor", lambda: extractor),
            ("sim_planner", lambda: planner),
            (
                "sim_runner",
                lambda: SimRunnerAgent(
                    store=self.artifacts, instance=f"sim{next(copies)}", options=self.config.simulator_options()
                ),
            ),
            ("judge", lambda: judge),
            ("tl_augmenter", lambda: augmenter),
            ("t_agent", lambda: t_agent),
            ("f_agent", lambda: f_agent),
            ("validity_checker", lambda: checker),
        ]

    async def close(self) -> None:
        """Close model clients."""
        for client in self.model_clients.values():
            close = getattr(client, "close", None)
            if close is not None:
                try:
                    await close()
                except Exception as exc:  # closing a client must not mask the real shutdown
                    log.debug("closing a model client failed", error=str(exc))
