"""Typed request/reply on the bus, as NATS micro services.

A :class:`RpcMethod` names a method (``mrs.search``) with its request and response pydantic models; the
owner serves it with :func:`serve` (a ``nats.micro`` service, so ``nats micro ls``/``info``/``stats`` see
it) and clients call it with :func:`call`. Requests are validated at the edge: a malformed request comes
back as a 400 error naming the fields, a :class:`~tools.errors.BadInputError` as a 400 with its
message, anything else as a 500; the caller gets an :class:`RpcError` and never waits for a timeout.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog
from nats.micro import add_service
from nats.micro.request import ERROR_CODE_HEADER, ERROR_HEADER, Request
from nats.micro.service import Service
from pydantic import BaseModel, ValidationError

from bus.connection import Bus
from bus.errors import BusError
from tools.errors import BadInputError

__all__ = ["RpcBadRequestError", "RpcError", "RpcMethod", "call", "serve"]

log = structlog.get_logger(__name__)

Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)


@dataclass(frozen=True)
class RpcMethod(Generic[Req, Resp]):
    """A request/reply method and its typed payloads.

    Attributes:
        name: Dotted method name; its subject is ``<namespace>.rpc.<name>``.
        request: The request model.
        response: The response model.
        description: What it does (shown by ``nats micro info``).
    """

    name: str
    request: type[Req]
    response: type[Resp]
    description: str = ""


class RpcError(BusError):
    """A method that failed in the service, or found no service."""

    def __init__(self, method: str, code: str, description: str) -> None:
        self.method = method
        self.code = code
        self.description = description
        super().__init__(f"{method} failed ({code}): {description}")


class RpcBadRequestError(RpcError, BadInputError):
    """The service refused the request as bad input (400)."""


Handler = Callable[[Any], Awaitable[BaseModel]]


async def serve(
    bus: Bus,
    *,
    name: str,
    methods: Sequence[tuple[RpcMethod[Any, Any], Handler]],
    version: str = "1.0.0",
    description: str = "",
    queue_group: str = "daemon",
) -> Service:
    """Serve typed methods as one micro service; copies in other processes share requests by queue group.

    Args:
        bus: A connected bus.
        name: Service name (letters, digits, ``-`` and ``_``).
        methods: Each method with its handler (request model in, response model out).
        version: The service's semantic version.
        description: What the service is.
        queue_group: Queue group shared by every copy of the service.

    Returns:
        The running service (stop it with ``await service.stop()``).
    """
    service = await add_service(
        bus.nc, name=name, version=version, description=description or name, queue_group=queue_group
    )
    for method, handler in methods:
        await service.add_endpoint(
            name=method.name.replace(".", "-"),
            subject=bus.subjects.rpc(method.name),
            handler=_endpoint(method, handler),
            metadata={"description": method.description} if method.description else None,
        )
    return service


def _endpoint(method: RpcMethod[Any, Any], handler: Handler) -> Callable[[Request], Awaitable[None]]:
    async def on_request(req: Request) -> None:
        try:
            params = method.request.model_validate_json(req.data or b"{}")
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(request)'}: {e['msg']}" for e in exc.errors()[:5])
            await req.respond_error("400", f"bad {method.name} request: {problems}")
            return
        except Exception as exc:  # bytes that are not JSON at all, or nested too deeply
            await req.respond_error("400", f"bad {method.name} request: {type(exc).__name__}")
            return
        try:
            result = await handler(params)
        except BadInputError as exc:
            await req.respond_error("400", str(exc)[:2000])
            return
        except Exception as exc:
            log.warning("rpc failed", method=method.name, error=f"{type(exc).__name__}: {exc}")
            await req.respond_error("500", f"{type(exc).__name__}: {exc}"[:2000])
            return
        await req.respond(result.model_dump_json().encode())

    return on_request


async def call(bus: Bus, method: RpcMethod[Req, Resp], request: Req, *, timeout: float = 30.0) -> Resp:
    """Call a method and return its typed response.

    Raises:
        RpcBadRequestError: The service refused the request as bad input.
        RpcError: The method failed in the service, or no service answered in time.
    """
    try:
        reply = await bus.nc.request(bus.subjects.rpc(method.name), request.model_dump_json().encode(), timeout=timeout)
    except Exception as exc:  # NoRespondersError, TimeoutError
        raise RpcError(method.name, "503", f"no service answered: {exc or type(exc).__name__}") from exc
    headers = reply.headers or {}
    if ERROR_HEADER in headers:
        code = headers.get(ERROR_CODE_HEADER, "500")
        cls = RpcBadRequestError if code == "400" else RpcError
        raise cls(method.name, code, headers[ERROR_HEADER])
    try:
        return method.response.model_validate_json(reply.data)
    except ValidationError as exc:
        raise RpcError(method.name, "502", f"the reply does not match {method.response.__name__}: {exc}") from exc
