"""The status page's usage chart: requests per minute over the last hour as inline SVG,
drawn on the server (no library, no script). Bars are requests, their red part errors;
the axis says the largest count and the span. Only presentation attributes (``fill``,
``x``...), no ``style``: the page's Content-Security-Policy allows no inline styles."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["usage_svg"]

WIDTH, HEIGHT = 720, 140
_LEFT, _BOTTOM, _TOP = 36, 18, 8


def usage_svg(per_minute: Sequence[tuple[int, int, int]]) -> str:
    """``per_minute``: ``(minute start, requests, errors)`` oldest first (as
    :meth:`~.ui_recent.RecentRequests.per_minute` gives)."""
    total = sum(r for _, r, _ in per_minute)
    errors = sum(e for _, _, e in per_minute)
    label = f"Requests per minute, last {len(per_minute)} minutes: {total} requests, {errors} errors"
    head = (f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" xmlns="http://www.w3.org/2000/svg"><title>{label}</title>')
    parts = [head]
    plot_w, plot_h = WIDTH - _LEFT - 4, HEIGHT - _TOP - _BOTTOM
    base = _TOP + plot_h
    parts.append(f'<line x1="{_LEFT}" y1="{base}" x2="{WIDTH - 4}" y2="{base}" stroke="#888" stroke-width="1"/>')
    top = max((r for _, r, _ in per_minute), default=0)
    if not per_minute or top == 0:
        parts.append(f'<text x="{_LEFT + plot_w / 2:.0f}" y="{_TOP + plot_h / 2:.0f}" text-anchor="middle" '
                     f'fill="#888" font-size="13">no requests in the last hour</text>')
    else:
        step = plot_w / len(per_minute)
        bar = max(step - 1, 1)
        for i, (_, requests, failed) in enumerate(per_minute):
            if not requests:
                continue
            x = _LEFT + i * step
            h = plot_h * requests / top
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{base - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="#3b82f6"><title>{requests} requests, {failed} errors</title></rect>')
            if failed:
                eh = plot_h * failed / top
                parts.append(f'<rect class="errors" x="{x:.1f}" y="{base - eh:.1f}" width="{bar:.1f}" '
                             f'height="{eh:.1f}" fill="#dc2626"/>')
        parts.append(f'<text x="{_LEFT - 4}" y="{_TOP + 10}" text-anchor="end" fill="#666" font-size="11">{top}</text>')
    parts.append(f'<text x="{_LEFT - 4}" y="{base}" text-anchor="end" fill="#666" font-size="11">0</text>')
    parts.append(f'<text x="{_LEFT}" y="{HEIGHT - 4}" fill="#666" font-size="11">-{len(per_minute)} min</text>')
    parts.append(f'<text x="{WIDTH - 4}" y="{HEIGHT - 4}" text-anchor="end" fill="#666" font-size="11">now</text>')
    parts.append("</svg>")
    return "".join(parts)
