"""``jxinspect trend``: a history database's changes as text, JSON and an HTML page of
line charts."""
