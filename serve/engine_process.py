"""The class engine in a process of its own: ``python -m serve.engine_process --port P``.

The class server (``python -m serve``) starts it beside its replicas and nginx sends ``/explainer/serve/`` to it, so
every replica's students reach one engine. A single-process app (``streamlit run main.py``) runs the same routes and
engine inside its own process instead (``main.py``). Imports no streamlit.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Callable
from pathlib import Path

import torch
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from core.checkpoints.app_options import DEFAULT_MAX_GIB, ENGINE_MODELS, parse_app_args
from core.checkpoints.load import load as load_checkpoint
from core.classroom.store import default_url
from core.model.config import PRESETS
from core.model.model import GPT
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import end_token_id
from serve.class_guard import origin
from serve.engine_routes import PREFIX, EngineRoutes
from serve.engine_service import EngineService

MODELS = dict(
    zip(
        ENGINE_MODELS,
        ("the shipped model", "the larger preset (random weights, real timing)", "the server's checkpoint"),
        strict=True,
    )
)


def make_service(
    model: str = "shipped", checkpoint: Path | None = None, max_gib: float = DEFAULT_MAX_GIB
) -> EngineService:
    """An engine service over the shipped model; the ``larger`` preset's shape with random weights (seed 0, every
    matrix drawn with standard deviation 0.3) and the shipped tokenizer, whose text means nothing and whose timing is
    real; or (``checkpoint``) the server's checkpoint folder ``checkpoint`` (``--model``: its weights in float32,
    at most ``max_gib`` GiB, and its own tokenizer and end token), named on every page. Raises ``ValueError`` for
    another name, for ``checkpoint`` without a folder, and with ``core.checkpoints.load``'s sentence for a folder
    it refuses."""
    if model not in MODELS:
        raise ValueError(f"the class engine runs one of {', '.join(MODELS)}, not {model!r}")
    torch.set_num_threads(1)  # as the app's sessions: two threads on a busy 2-core machine contend
    if model == "checkpoint":
        if checkpoint is None:
            raise ValueError("the class engine's checkpoint is the server's --model folder: none was given")
        net, tok, card = load_checkpoint(checkpoint, max_gib=max_gib)
        return EngineService(net, tok, f"{MODELS[model]} {card.name}", end_id=end_token_id(tok))
    if model == "shipped":
        net = load_model()
    else:
        torch.manual_seed(0)
        net = GPT(PRESETS["larger"]).eval()
        for p in net.parameters():
            p.requires_grad_(False)
            if p.dim() == 2:  # a default init's logits are all alike: float32 rounding would flip its near-ties
                p.normal_(0, 0.3)
    tok = load_shipped_tokenizer()
    return EngineService(net, tok, MODELS[model], end_id=end_token_id(tok))


def app(make: Callable[[], EngineService], store_url: str, public_origin: str | None = None) -> Starlette:
    """The engine's routes and ``…/health`` (answers once ``make()``'s model is loaded: the class server waits for
    it)."""
    routes = EngineRoutes(make, store_url, public_origin)

    frozen = []

    async def health(request):
        svc = await routes.service()
        if not frozen:  # the model loaded: full collections skip it (a long pause is a gap in every stream)
            gc.collect()
            gc.freeze()
            frozen.append(True)
        return JSONResponse({"epoch": svc.epoch, "model": svc.model_label})

    return Starlette(routes=[*routes.routes(), Route(f"{PREFIX}/health", health, methods=["GET"])])


def main(argv: list[str] | None = None) -> int:
    """``--port P [-- APP OPTIONS]``: the app's own options (``--class-store``, ``--public-url``,
    ``--engine-model``) as every replica gets them."""
    argv = sys.argv[1:] if argv is None else argv
    own, app_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    ap = argparse.ArgumentParser(prog="python -m serve.engine_process", description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, required=True, help="the loopback port nginx reaches it on")
    port = ap.parse_args(own).port
    try:
        options = parse_app_args(app_args)
    except ValueError as err:
        ap.error(str(err))
    store, public = options.class_store or default_url(), origin(options.public_url)
    try:  # loaded before the port opens: a checkpoint refused ends the process with its sentence in the log
        service = make_service(options.engine_model, options.model, options.max_model_gib)
    except ValueError as err:
        print(f"the class engine did not start: {err}", file=sys.stderr)
        return 2
    uvicorn.run(app(lambda: service, store, public), host="127.0.0.1", port=port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
