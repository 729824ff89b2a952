"""Pictures and pages for a person: device grids of each weight (:mod:`.grid`, :mod:`.grid_svg`)
and the self-contained HTML report of a dump (:mod:`.html`)."""
