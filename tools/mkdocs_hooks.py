"""MkDocs hooks: the reference pages and the performance charts are made from the code
and from committed result files while the site builds, so they cannot drift from them.

A page asks for a generated part with a line of its own::

    <!-- generated: config -->

``GENERATORS`` maps each name to a function returning Markdown. Charts listed in
``docs/performance/results.json`` are drawn with matplotlib into the built site (SVG);
nothing is benchmarked here. The generators are plain functions: tests call them too.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import json
import pathlib
import re
import sys
from collections.abc import Callable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
RESULTS = ROOT / "docs" / "performance" / "results.json"
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.MULTILINE)

if str(SRC) not in sys.path:  # the checkout's sources, whatever is installed
    sys.path.insert(0, str(SRC))


# ------------------------------------------------------------------ configuration

# YAML section -> the dataclass that holds it (``models.<name>`` is one ModelEntry each)
_SECTIONS = (
    ("(top level)", "Config"),
    ("models.<name>", "ModelEntry"),
    ("smart_routing", "SmartRoutingConfig"),
    ("credential_pool", "CredentialPoolConfig"),
    ("gateway", "GatewayConfig"),
    ("gateway.metrics", "MetricsConfig"),
    ("gateway.tracing", "TracingConfig"),
    ("teams", "TeamsConfig"),
)

# What a field means, for fields whose line in config.py carries no comment.
# Types and defaults always come from the dataclasses themselves.
_MEANING = {
    "Config.models": "Named models callers ask for (see `models.<name>` below).",
    "Config.default_model": "The model used when a caller names none, and the primary of smart routing.",
    "Config.fallback": "Model names or `provider/model` strings tried in order when the primary gives up.",
    "Config.smart_routing": "Cheap/strong routing (section below).",
    "Config.credential_pool": "Where credential state lives (section below).",
    "Config.gateway": "`modelwire serve` settings (section below).",
    "Config.teams": "Virtual keys, budgets, rate limits and spend (section below).",
    "ModelEntry.provider": "A catalog row or one of its aliases (see Providers); `custom` for any endpoint.",
    "ModelEntry.model": "The model id the provider expects.",
    "ModelEntry.api_mode": "The protocol; picks a sibling catalog row. Required for `custom`.",
    "ModelEntry.base_url": "An `http://` or `https://` URL; required for `custom`.",
    "ModelEntry.api_key_env": "A variable name or a list of them, holding the key (priority order).",
    "ModelEntry.thinking": "Reasoning level for this model (`false`, `none` or `off`: none).",
    "ModelEntry.auth_style": "How the key is sent.",
    "ModelEntry.headers": "Extra request headers (a mapping of strings).",
    "ModelEntry.extra": "Body fields merged into every request, last.",
    "SmartRoutingConfig.enabled": "Route simple turns to `cheap_model`.",
    "SmartRoutingConfig.cheap_model": "Model name for simple turns; required when enabled.",
    "SmartRoutingConfig.max_simple_chars": "Longest turn (characters) that can count as simple.",
    "SmartRoutingConfig.max_simple_words": "Most words a simple turn may have.",
    "CredentialPoolConfig.strategies": "Provider -> strategy; others use `fill_first`.",
    "GatewayConfig.metrics": "Prometheus metrics at `/metrics` (section below).",
    "GatewayConfig.tracing": "OpenTelemetry traces (section below).",
    "MetricsConfig.enabled": "Serve and record metrics; unset: on when bound to loopback or `keys_env` holds keys.",
    "TracingConfig.enabled": "Make spans for requests, Client calls and attempts (needs the `otel` extra).",
    "GatewayConfig.aliases": "Model ids clients send -> model names or `provider/model` strings.",
    "GatewayConfig.max_body_bytes": "Largest request body accepted (413 above).",
    "GatewayConfig.access_log": "One line per request on stderr (never keys or bodies).",
    "GatewayConfig.seal_secret_env": "Variable holding the secret that seals foreign reasoning.",
}

# Said after the meaning: forms the validator accepts that no constant lists.
_FORMS = {
    "CredentialPoolConfig.store": "`sqlite:///path`, `redis://host:port/db` or `rediss://...` (TLS).",
    "TeamsConfig.store": "`sqlite:///path` or `postgresql://user@host/db`.",
    "TeamsConfig.limiter": "`redis://host:port/db`, `rediss://...` (TLS) or `sqlite` (the store's file).",
}

# field -> the module constant listing its allowed values
_CHOICES = {
    "ModelEntry.api_mode": "API_MODES",
    "ModelEntry.thinking": "THINKING_LEVELS",
    "ModelEntry.auth_style": "AUTH_STYLES",
    "CredentialPoolConfig.strategies": "STRATEGIES",
}

_TYPES = {
    "str": "string",
    "str | None": "string or null",
    "int": "integer",
    "bool": "boolean",
    "tuple[str, ...]": "list of strings",
    "Mapping[str, str]": "mapping of strings",
    "Mapping[str, Any]": "mapping",
    "tuple[tuple[str, str], ...]": "mapping of strings",
    "Mapping[str, ModelEntry]": "mapping of names to models",
}


def _field_comments(source: str) -> dict[str, str]:
    """``Class.field`` -> the comment on the field's line, or on the lines just above it."""
    lines = source.splitlines()
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            line = lines[stmt.lineno - 1]
            text = line.partition("  # ")[2].strip() if "  # " in line else ""
            above = []
            i = stmt.lineno - 2
            while i >= 0 and lines[i].strip().startswith("#"):
                above.insert(0, lines[i].strip().lstrip("#").strip())
                i -= 1
            text = " ".join(filter(None, [" ".join(above), text]))
            if text:
                out[f"{node.name}.{stmt.target.id}"] = text
    return out


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
        if dataclasses.is_dataclass(value):
            return "(section)"
    else:
        return "required"
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, (dict, tuple, list)) and not value:
        return "`{}`" if isinstance(value, dict) else "`[]`"
    if isinstance(value, int) and value >= 1024 * 1024 and value % (1024 * 1024) == 0:
        return f"`{value}` ({value // (1024 * 1024)} MiB)"
    return f"`{json.dumps(value) if isinstance(value, str) else value}`"


def _sentence(text: str) -> str:
    """A source comment as a table cell: capitalized, ending with a period."""
    text = text.strip().replace("->", "→").replace("|", "\\|")
    if text.startswith("None:"):
        text = "Unset:" + text[5:]
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", ")", "`")) else text + "."


def _rst_to_md(text: str) -> str:
    """Docstring markup (``code``, :mod:`x`) as Markdown."""
    text = re.sub(r":(?:mod|class|func|meth|data|attr):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


def config_reference() -> str:
    from modelwire import config

    comments = _field_comments(pathlib.Path(config.__file__).read_text(encoding="utf-8"))
    parts = []
    for section, cls_name in _SECTIONS:
        cls = getattr(config, cls_name)
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
        for f in dataclasses.fields(cls):
            if f.name in ("name", "path"):  # the entry's key in the file / where it was read
                continue
            key = f"{cls_name}.{f.name}"
            meaning = _sentence(comments.get(key) or _MEANING.get(key) or "(not described yet)")
            if key in _CHOICES and hasattr(config, _CHOICES[key]):
                values = ", ".join(f"`{v}`" for v in getattr(config, _CHOICES[key]))
                meaning += f" One of {values}."
            if key in _FORMS:
                meaning += " " + _FORMS[key]
            type_name = _TYPES.get(str(f.type), f"`{f.type}`")
            default = _default(f)
            if type_name.startswith("mapping") and default == "`[]`":
                default = "`{}`"  # tuple of pairs in Python, a mapping in the file
            rows.append(f"| `{f.name}` | {type_name} | {default} | {meaning} |")
        title = section if section.startswith("(") else f"`{section}`"
        parts.append(f"### {title}\n\n{_rst_to_md(doc)}\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


# ------------------------------------------------------------------ providers


def provider_count() -> int:
    from modelwire.providers.catalog import CATALOG

    return len(CATALOG)


def providers_table() -> str:
    from modelwire.providers.catalog import ALIASES, CATALOG, RUNTIME_BASE_URL

    aliases: dict[str, list[str]] = {}
    for alias, name in ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    rows = [
        "| provider | protocol | base URL | key variables | reasoning back | notes |",
        "|---|---|---|---|---|---|",
    ]
    for name in sorted(CATALOG):
        p = CATALOG[name]
        base = "(given at run time)" if name in RUNTIME_BASE_URL or not p.base_url else p.base_url
        if p.key_env:
            keys = ", ".join(f"`{k}`" for k in p.key_env)
        else:
            keys = "OAuth" if p.extra.get("oauth") else "—"
        notes = _provider_notes(p)
        if name in aliases:
            notes.append("also " + ", ".join(f"`{a}`" for a in sorted(aliases[name])))
        rows.append(f"| `{name}` | {p.api_mode} | {base} | {keys} | {p.reasoning_echo} | "
                    f"{'; '.join(notes)} |")
    return (f"{len(CATALOG)} catalog rows.\n\n" + "\n".join(rows))


def _provider_notes(p: Any) -> list[str]:
    notes = []
    if p.anthropic_version:
        notes.append(f"anthropic-version {p.anthropic_version}")
    if p.reasoning_request != "none":
        notes.append(f"thinking via {p.reasoning_request}")
    if p.stream_only:
        notes.append("stream only")
    if p.local:
        notes.append("local server, key optional")
    if p.unique_tool_names:
        notes.append("unique tool names")
    if p.tool_id_format != "any":
        notes.append(f"tool ids: {p.tool_id_format}")
    if p.raw_passthrough:
        notes.append("same-protocol lane")
    if p.counts_tokens:
        notes.append("counts tokens")
    if not p.vision:
        notes.append("no images")
    return notes


# ------------------------------------------------------------------ prices


def prices_table() -> str:
    from modelwire.providers.prices import PRICES

    def rate(value: float | None) -> str:
        return "—" if value is None else f"{value:g}"

    rows = [
        "| model | input | output | cache read | cache write | reasoning | source | read | verified |",
        "|---|---:|---:|---:|---:|---:|---|---|---|",
    ]
    for key in sorted(PRICES):
        p = PRICES[key]
        host = p.source.split("//", 1)[-1].split("/", 1)[0]
        rows.append(f"| `{key}` | {rate(p.input)} | {rate(p.output)} | {rate(p.cache_read)} | "
                    f"{rate(p.cache_write)} | {rate(p.reasoning)} | [{host}]({p.source}) | "
                    f"{p.checked} | {'yes' if p.verified else '**no**: third-party copies only'} |")
    unverified = sum(not p.verified for p in PRICES.values())
    return (f"{len(PRICES)} rows, {unverified} of them unverified.\n\n" + "\n".join(rows))


# ------------------------------------------------------------------ errors


def errors_tree() -> str:
    from modelwire import errors

    drawn = {}  # the descriptions drawn in the module docstring's tree
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^[\s│├└─]*([A-Z]\w+Error)\s+(.+)$", line)
        if m:
            drawn[m.group(1)] = m.group(2).strip()
    lines: list[str] = []

    def walk(cls: type, depth: int) -> None:
        doc = (cls.__doc__ or "").strip().splitlines()
        text = drawn.get(cls.__name__) or (doc[0] if doc else "")
        text = text.replace("``", "`")
        lines.append(f"{'    ' * depth}- **`{cls.__name__}`**{' — ' + text if text else ''}")
        for sub in cls.__subclasses__():
            if sub.__module__ == errors.__name__:
                walk(sub, depth + 1)

    walk(errors.ModelwireError, 0)
    return "\n".join(lines)


# ------------------------------------------------------------------ CLI


def cli_reference() -> str:
    import click

    from modelwire.cli import COMMANDS, _group

    group = _group()
    out = []
    root = click.Context(group, info_name="modelwire")
    out.append(f"## `modelwire`\n\n```text\n{group.get_help(root)}\n```")
    for name in COMMANDS:
        cmd = group.get_command(root, name)
        if cmd is None:
            continue
        out.extend(_command_help(cmd, f"modelwire {name}", root, 2))
    return "\n\n".join(out)


def _command_help(cmd: Any, path: str, parent: Any, level: int) -> list[str]:
    import click

    ctx = click.Context(cmd, info_name=path.rsplit(" ", 1)[-1], parent=parent)
    out = [f"{'#' * level} `{path}`\n\n```text\n{cmd.get_help(ctx)}\n```"]
    if isinstance(cmd, click.Group):
        for sub in cmd.list_commands(ctx):
            out.extend(_command_help(cmd.get_command(ctx, sub), f"{path} {sub}", ctx,
                                     min(level + 1, 4)))
    return out


# ------------------------------------------------------------------ performance


def load_results() -> dict[str, Any]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


def performance_tables() -> str:
    data = load_results()
    parts = []
    for table in data["tables"]:
        head = "| " + " | ".join(table["columns"]) + " |"
        sep = "|" + "|".join("---:" if i else "---" for i in range(len(table["columns"]))) + "|"
        body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in table["rows"]]
        note = f"\n\n{table['note']}" if table.get("note") else ""
        parts.append(f"### {table['title']}\n\n" + "\n".join([head, sep, *body]) + note)
    return "\n\n".join(parts)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def draw_chart(chart: dict[str, Any]) -> bytes:
    """One horizontal bar chart as SVG bytes (matplotlib, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "modelwire"  # the same bytes on every build
    labels = [b[0] for b in chart["bars"]]
    values = [b[1] for b in chart["bars"]]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(labels) + 1.2))
    colors = ["#3f51b5" if label.startswith("modelwire") else "#9e9e9e" for label in labels]
    ax.barh(labels, values, color=colors)
    ax.invert_yaxis()
    if chart.get("log"):
        ax.set_xscale("log")
    ax.set_xlabel(chart["unit"])
    ax.set_title(chart["title"], fontsize=11)
    for y, v in enumerate(values):
        ax.text(v, y, f" {_cell(v)}", va="center", fontsize=9)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


GENERATORS: dict[str, Callable[[], str]] = {
    "config": config_reference,
    "providers": providers_table,
    "prices": prices_table,
    "errors": errors_tree,
    "cli": cli_reference,
    "performance": performance_tables,
}


# ------------------------------------------------------------------ MkDocs events


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{page.file.src_uri}: no generator named {name!r}")
        return GENERATORS[name]()

    return MARKER.sub(fill, markdown)


_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr|exc|obj):<code>(~?)([^<]*)</code>")


def _role_as_code(m: re.Match[str]) -> str:
    name = m.group(2).rsplit(".", 1)[-1] if m.group(1) else m.group(2)  # ~ shows the last part
    return f"<code>{name}</code>"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Docstrings use reST roles (:class:`~x.Y`); the API pages show them as code."""
    return _ROLE.sub(_role_as_code, html)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for chart in load_results()["charts"]:
        files.append(File.generated(config, f"performance/{chart['file']}",
                                    content=draw_chart(chart)))
    return files
