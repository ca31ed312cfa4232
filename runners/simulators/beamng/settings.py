"""Settings of the BeamNG.tech adapter, and how the conventional ``BNG_*`` variables map onto them.

Environment variables are read only in :mod:`runners.config`; this module turns a mapping it is given
into settings (:func:`beamng_settings_from_env`), so the configuration module can call it with
``os.environ`` and tests can call it with a plain dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runners.simulators.beamng.errors import BeamNGConfigError

__all__ = ["DEFAULT_PORT", "ENV_VARIABLES", "BeamNGSettings", "beamng_settings_from_env"]

DEFAULT_PORT = 25252
"""BeamNG.tech's default BeamNGpy port."""

ENV_VARIABLES: dict[str, str] = {
    "BNG_HOME": "home",
    "BNG_USER": "user",
    "BNG_HOST": "host",
    "BNG_PORT": "port",
}
"""Conventional variables (``BNG_HOME`` is beamngpy's own) and the setting each gives."""


class BeamNGSettings(BaseModel):
    """Where BeamNG.tech is and how scenarios are built and run in it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: Path | None = Field(
        default=None, description="BeamNG.tech install folder (BNG_HOME); lets drivemt start the game itself."
    )
    user: Path | None = Field(default=None, description="BeamNG.tech user folder for a game drivemt starts.")
    host: str | None = Field(
        default=None,
        description="Host of a running BeamNG.tech. Unset: localhost when home is set, else BeamNG is not configured.",
    )
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535, description="BeamNGpy port of the game.")
    launch: bool = Field(default=True, description="Start BeamNG.tech from home when nothing answers at host:port.")
    headless: bool = Field(default=True, description="Start the game without a window.")
    connect_timeout_s: float = Field(
        default=3.0, gt=0, le=120, description="How long to wait for host:port to accept a connection."
    )
    socket_timeout_s: float = Field(
        default=300.0, gt=0, description="Longest wait for one answer of a connected game (a hung game fails)."
    )
    level: str = Field(default="smallgrid", min_length=1, description="A flat level the roads are laid on.")
    road_material: str = Field(default="road_rubber_sticky", description="Decal material of road surfaces.")
    lane_markings: bool = Field(default=True, description="Draw centre, lane and edge lines as decal roads.")
    lane_width_m: float = Field(default=3.6, gt=1.5, le=6, description="Lane width where the DSL gives none.")
    default_speed_mph: float = Field(default=30.0, gt=0, le=100, description="Speed of actors without a limit.")
    turn_speed_mps: float = Field(default=6.0, gt=0, le=20, description="Speed through turns at a junction.")
    meet_time_s: float = Field(
        default=8.0, gt=2, le=60, description="When the vehicles a report says collided reach their conflict point."
    )
    meet_jitter_s: float = Field(
        default=0.8, ge=0, le=5, description="Seeded spread of each actor's arrival time between variants."
    )
    speed_jitter: float = Field(default=0.1, ge=0, le=0.5, description="Seeded relative spread of actor speeds.")
    stop_wait_s: float = Field(default=2.0, ge=0, le=30, description="How long a stopping actor waits before going on.")
    steps_per_second: int = Field(default=60, ge=20, le=2000, description="Physics steps per simulated second.")
    poll_interval_s: float = Field(default=0.1, gt=0, le=1, description="Simulated seconds between sensor polls.")
    damage_threshold: float = Field(
        default=10.0, gt=0, description="Damage increase (BeamNG damage units) within one poll that counts as a hit."
    )
    contact_distance_m: float = Field(
        default=8.0,
        gt=0,
        description="Farthest centre distance at which the nearest vehicle counts as the other party.",
    )
    models: dict[str, str] = Field(
        default_factory=dict, description="BeamNG vehicle model per DSL body type, overriding the built-in choice."
    )

    @property
    def configured(self) -> bool:
        """Whether any BeamNG.tech is configured (a home to start, or a host to connect to)."""
        return self.home is not None or self.host is not None

    @property
    def effective_host(self) -> str:
        """The host connected to: the configured one, else localhost."""
        return self.host or "localhost"


def beamng_settings_from_env(env: Mapping[str, str], base: BeamNGSettings | None = None) -> BeamNGSettings:
    """Settings from the conventional ``BNG_HOME``, ``BNG_USER``, ``BNG_HOST`` and ``BNG_PORT`` variables.

    Variables that are set (and not empty) override ``base``; everything else keeps ``base``'s value.

    Args:
        env: The environment (``os.environ`` in :mod:`runners.config`), or any mapping.
        base: Settings to start from (defaults when not given).

    Returns:
        The merged settings.

    Raises:
        BeamNGConfigError: Naming the variable whose value does not fit (``BNG_PORT=abc``).
    """
    base = base or BeamNGSettings()
    data = base.model_dump()
    given: dict[str, str] = {}
    for variable, field in ENV_VARIABLES.items():
        value = env.get(variable, "").strip()
        if value:
            data[field] = value
            given[field] = variable
    try:
        return BeamNGSettings.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        source = given.get(field, f"beamng.{field}")
        raise BeamNGConfigError(source, err["msg"]) from exc
