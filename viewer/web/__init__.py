"""Reports: a run directory, or many, as a static site that opens from disk (`sandbox report`).

The page is ours (assets/: index.html, report.js, report.css; no library, no network); its data
comes from run directories through the log's own readers and the viewer's map and positions.
Boards come from the command line as Markdown (the text the terminal prints), so this package
never imports a scorer.

    scrub = Scrubber({Path("runs/suite"): "suite"})          # no keys, no absolute paths
    write_site(Path("site"), [Section("runs", "suite", items=[...], board=markdown)], scrub,
               title="suite")
"""

from .markdown import markdown_html
from .rundata import map_data, run_data
from .scrub import Scrubber
from .site import SITE_NAMES, Section, SiteStats, write_site

__all__ = ["SITE_NAMES", "Scrubber", "Section", "SiteStats", "map_data", "markdown_html",
           "run_data", "write_site"]
