"""The status page as HTML, from a snapshot (:mod:`.ui_data`): server-rendered, every
value escaped, styles and the one script inline under the response's nonce.

The script re-fetches ``/ui`` every few seconds and swaps the page's ``<main>`` for the
new one (the same server-rendered HTML: one renderer, and the page works without it)."""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Sequence
from typing import Any

from .ui_chart import usage_svg

__all__ = ["REFRESH_S", "login_page", "message_page", "status_page"]

REFRESH_S = 3

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1f2937;background:#f9fafb}
header{display:flex;align-items:center;gap:1em;padding:.6em 1.2em;background:#111827;color:#f9fafb}
header h1{font-size:1.1em;margin:0}header form{margin-left:auto}
main{padding:0 1.2em 2em}section{margin-top:1.4em}h2{font-size:1em;margin:0 0 .4em}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid #e5e7eb;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f3f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}
.state-ok{color:#15803d}.state-cooling{color:#b45309;font-weight:600}.state-dead{color:#b91c1c;font-weight:600}
.status-ok{color:#15803d}.status-err{color:#b91c1c}.muted{color:#6b7280}
.badge{padding:.1em .5em;border-radius:.6em;background:#e5e7eb}.badge.degraded{background:#fde68a}
.chart{max-width:100%;height:auto;background:#fff;border:1px solid #e5e7eb}code{white-space:nowrap}
.login{max-width:22em;margin:4em auto;background:#fff;padding:1.5em;border:1px solid #e5e7eb}
.login input{width:100%;box-sizing:border-box;margin:.5em 0;padding:.4em}.error{color:#b91c1c}
"""

# swaps <main> for the one in a fresh /ui; a 401 (the session ended) says so. The
# status page's <main> is the only one, and no value in it can hold "</main>" unescaped
_SCRIPT = """
(function(){
  var every = %d * 1000;
  function note(text){var n=document.getElementById('refresh');if(n){n.textContent=text;}}
  function tick(){
    fetch('/ui', {credentials: 'same-origin', cache: 'no-store', headers: {'Accept': 'text/html'}})
      .then(function(r){
        if (r.status === 401) { note('signed out: reload to sign in'); return null; }
        if (!r.ok) { note('refresh failed: ' + r.status); return null; }
        return r.text();
      })
      .then(function(text){
        if (text === null) { return; }
        // only <main>: a whole page's <style> carries another response's nonce
        var from = text.indexOf('<main>'), to = text.lastIndexOf('</main>');
        if (from < 0 || to < from) { note('refresh failed: no page in the answer'); return; }
        var part = text.slice(from, to + 7);
        var fresh = new DOMParser().parseFromString(part, 'text/html').querySelector('main');
        var main = document.querySelector('main');
        if (fresh && main) { main.replaceWith(fresh); }
      })
      .catch(function(){ note('refresh failed: gateway unreachable'); })
      .then(function(){ setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _clock(t: float) -> str:
    return time.strftime("%H:%M:%S", time.gmtime(t))


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _usd(value: float | None) -> str:
    return "-" if value is None else f"${value:.6f}"


def _table(headings: Sequence[str], rows: Iterable[Sequence[str]], *, numeric: frozenset[int] = frozenset(),
           css: str = "", empty: str = "none") -> str:
    """A table whose cells are already escaped HTML."""
    body = []
    for row in rows:
        cells = "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    if not body:
        return f'<p class="muted">{_e(empty)}</p>'
    head = "".join(f"<th>{_e(h)}</th>" for h in headings)
    return f'<table class="{css}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _models(models: list[dict[str, Any]]) -> str:
    rows = [[_e(m["name"]) + (' <span class="badge">default</span>' if m["default"] else ""),
             _e(f'{m["provider"]}/{m["model"]}'), _e(" → ".join(m["fallbacks"]) or "-"),
             _e(", ".join(m["aliases"]) or "-")] for m in models]
    return _table(("model", "served by", "fallbacks", "aliases"), rows, css="models",
                  empty="no models configured")


def _credentials(pools: list[dict[str, Any]]) -> str:
    rows = []
    for pool in pools:
        for c in pool["credentials"]:
            cooling = f'{c["cooling_for_s"]:.0f} s' if c["state"] == "cooling" else "-"
            reason = _e(c["reason"] or "-")
            if c.get("detail"):
                reason += f'<br><span class="muted">{_e(c["detail"])}</span>'
            rows.append([_e(pool["provider"]), _e(c["label"]), f'<code>{_e(c["masked"] or "-")}</code>',
                         f'<span class="state-{_e(c["state"])}">{_e(c["state"])}</span>', cooling, reason,
                         _e(", ".join(pool["models"]))])
    return _table(("provider", "credential", "key", "state", "cooling for", "reason", "models"), rows,
                  numeric=frozenset({4}), css="credentials",
                  empty="no credential pool opened yet (models with a fixed key, or none, have no pool)")


def _recent(rows: list[dict[str, Any]], size: int) -> str:
    out = []
    for r in rows:
        ok = "status-ok" if r["status"] < 400 else "status-err"
        door = r["door"] + (" (lane)" if r["lane"] else "")
        out.append([_e(_clock(r["time"])), _e(door), _e(r["asked"]), _e(r["model"]), _e(r["served"]),
                    _e(r["provider"]), f'<span class="{ok}">{r["status"]}</span>', _ms(r["latency_ms"]),
                    _ms(r["overhead_ms"]), str(r["attempts"]), _usd(r["cost_usd"])])
    table = _table(("time (UTC)", "door", "model asked", "model", "served by", "provider", "status",
                    "latency ms", "overhead ms", "attempts", "cost"), out,
                   numeric=frozenset({6, 7, 8, 9, 10}), css="recent", empty="no requests yet")
    return f'<p class="muted">the last {size} requests are kept, newest first; no content</p>{table}'


def _overhead(stats: dict[str, Any]) -> str:
    cells = [_ms(stats.get(k)) for k in ("p50", "p90", "p99")] + [str(stats.get("count", 0))]
    return _table(("p50 ms", "p90 ms", "p99 ms", "requests"), [cells], numeric=frozenset({0, 1, 2, 3}),
                  css="overhead")


def _spend(spend: dict[str, Any]) -> str:
    if not spend.get("enabled"):
        return '<p class="muted">teams are off (teams.enabled): no spend record</p>'
    if spend.get("error"):
        return f'<p class="error">the teams store did not answer: {_e(spend["error"])}</p>'
    parts = []
    for by in ("keys", "teams"):
        rows = [[_e(r["name"]), str(r["requests"]), str(r["input_tokens"]), str(r["output_tokens"]),
                 _usd(r["cost_usd"]), str(r["unpriced_requests"])] for r in spend.get(by, ())]
        parts.append(f"<h3>per {by[:-1]}</h3>" + _table(
            (by[:-1], "requests", "input tokens", "output tokens", "cost", "unpriced"), rows,
            numeric=frozenset({1, 2, 3, 4, 5}), css=f"spend-{by}", empty="no spend recorded"))
    return f'<p class="muted">the last {_e(spend["since"])}</p>' + "".join(parts)


def _captures(index: dict[str, Any]) -> str:
    if not index.get("enabled"):
        return '<p class="muted">capture off (gateway.capture)</p>'
    rows = [[f'<a href="/admin/captures/{_e(c["id"])}">{_e(c["id"])}</a>', _e(_clock(c["time"])),
             _e(c["model"]), str(c["status"]), "yes" if c["failed"] else "no", str(c["bytes"])]
            for c in index.get("captures", ())]
    where = f'<p class="muted">written to <code>{_e(index.get("dir"))}</code></p>'
    return where + _table(("capture", "time (UTC)", "model", "status", "failed", "bytes"), rows,
                          numeric=frozenset({3, 5}), css="captures", empty="no captures yet")


def _main(data: dict[str, Any]) -> str:
    status = data["status"]
    problems = "".join(f"<li>{_e(', '.join(f'{k}: {v}' for k, v in p.items()))}</li>" for p in data["problems"])
    summary = (f'<p>gateway <span class="badge {_e(status)}">{_e(status)}</span> · modelwire {_e(data["version"])}'
               f' · updated <span class="updated">{_e(_clock(data["now"]))}</span> UTC'
               f' · <span id="refresh" class="muted">refreshes every {REFRESH_S} s</span></p>')
    if problems:
        summary += f'<ul class="problems">{problems}</ul>'
    sections = [
        ("usage", "Requests per minute, last hour", usage_svg([(m["start"], m["requests"], m["errors"])
                                                              for m in data["per_minute"]])
         if data["per_minute"] else '<p class="muted">no requests kept</p>'),
        ("overhead", "Gateway overhead (its own time per request)", _overhead(data["overhead_ms"])),
        ("models", "Models and fallbacks", _models(data["models"])),
        ("credentials", "Credentials", _credentials(data["credentials"])),
        ("recent", "Recent requests", _recent(data["recent"], data["recent_size"])),
        ("spend", "Spend", _spend(data["spend"])),
        ("captures", "Request captures", _captures(data["captures"])),
    ]
    body = "".join(f'<section id="{key}"><h2>{_e(title)}</h2>{content}</section>'
                   for key, title, content in sections)
    return f"<main>{summary}{body}</main>"


def _page(title: str, nonce: str, body: str, script: bool) -> str:
    js = f'<script nonce="{nonce}">{_SCRIPT % REFRESH_S}</script>' if script else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{_e(title)}</title><link rel="icon" href="data:,">'
            f'<style nonce="{nonce}">{_CSS}</style></head><body>{body}{js}</body></html>')


def status_page(data: dict[str, Any], nonce: str, *, signed_in: bool) -> str:
    """The whole page; ``signed_in``: by the session cookie (a sign-out button then)."""
    out = ('<form method="post" action="/ui/logout"><button type="submit">sign out</button></form>'
           if signed_in else "")
    header = f"<header><h1>modelwire status</h1>{out}</header>"
    return _page("modelwire status", nonce, header + _main(data), script=True)


def login_page(nonce: str, error: str | None = None) -> str:
    """The sign-in form: an admin key, posted to ``/ui/login``."""
    err = f'<p class="error" role="alert">{_e(error)}</p>' if error else ""
    form = ('<form class="login" method="post" action="/ui/login"><h2>modelwire status</h2>'
            f'{err}<label for="key">admin key</label>'
            '<input id="key" name="key" type="password" autocomplete="current-password" required autofocus>'
            '<button type="submit">sign in</button></form>')
    return _page("modelwire status: sign in", nonce, form, script=False)


def message_page(nonce: str, title: str, text: str) -> str:
    return _page(title, nonce, f'<div class="login"><h2>{_e(title)}</h2><p>{_e(text)}</p></div>', script=False)
