"""``python -m dashboard``: serve the dashboard."""

from dashboard.app import main

main()
