"""``python -m jxinspect``."""

from jxinspect.cli.app import main

main()
