"""``python -m faceoff.dashboard``: serve the dashboard."""

from faceoff.dashboard.app import main

main()
