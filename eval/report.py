"""Reports: every eval command writes `<out>/report.json` (machine-readable), `<out>/report.md` and
`<out>/report.html` (human, with the plots) and prints a compact table to the terminal.

A report is a title, a results dict (goes to JSON as is), a list of named tables (lists of row
dicts) and a list of plot paths.

>>> print(format_table([{"k": 1, "pass@k": 0.5}], ["k", "pass@k"]))
k  pass@k
-  ------
1  0.500
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence


def _fmt(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.3f}"
    return str(v)


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Plain-text aligned table (for the terminal)."""
    columns = list(columns or (rows[0].keys() if rows else []))
    cells = [[_fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths).rstrip())
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    columns = list(columns or (rows[0].keys() if rows else []))
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def _html_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(r.get(c, '')))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _json_safe(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if hasattr(v, "item") and callable(v.item):  # numpy scalars
        return _json_safe(v.item())
    return v


@dataclass
class Table:
    name: str
    rows: list[dict[str, Any]]
    columns: list[str] | None = None
    terminal: bool = True  # print it in the terminal summary

    @property
    def cols(self) -> list[str]:
        return list(self.columns or (self.rows[0].keys() if self.rows else []))


@dataclass
class Report:
    title: str
    results: dict[str, Any] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write report.json, report.md and report.html into `out_dir`; returns their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        data = {"title": self.title, "results": self.results,
                "tables": {t.name: t.rows for t in self.tables},
                "plots": [_rel(p, out) for p in self.plots]}
        paths = {"json": out / "report.json", "md": out / "report.md", "html": out / "report.html"}
        paths["json"].write_text(json.dumps(_json_safe(data), indent=2) + "\n")
        md = [f"# {self.title}", ""] + [f"- {n}" for n in self.notes] + ([""] if self.notes else [])
        for t in self.tables:
            md += [f"## {t.name}", "", markdown_table(t.rows, t.cols), ""]
        for p in self.plots:
            md += [f"![{Path(p).stem}]({_rel(p, out)})", ""]
        paths["md"].write_text("\n".join(md))
        body = [f"<h1>{html.escape(self.title)}</h1>"]
        body += ["<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in self.notes) + "</ul>"] if self.notes else []
        for t in self.tables:
            body += [f"<h2>{html.escape(t.name)}</h2>", _html_table(t.rows, t.cols)]
        body += [f'<figure><img src="{html.escape(_rel(p, out))}" alt="{html.escape(Path(p).stem)}"></figure>' for p in self.plots]
        style = "body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse;margin:1em 0}" \
                "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}img{max-width:100%}"
        paths["html"].write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(self.title)}</title>"
                                 f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
        return paths

    def terminal_summary(self) -> str:
        parts = [self.title, "=" * len(self.title)] + [f"- {n}" for n in self.notes]
        for t in self.tables:
            if t.terminal and t.rows:
                parts += ["", t.name, format_table(t.rows, t.cols)]
        return "\n".join(parts)


def _rel(path: str | Path, base: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)
