"""``python -m jxinspect``."""

from jxinspect.cli import main

main()
