"""The Faceoff dashboard: Dash pages over the service database (read-only)."""
