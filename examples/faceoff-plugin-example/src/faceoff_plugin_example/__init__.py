"""An example Faceoff plug-in: SpaRSA (proximal gradient with Barzilai–Borwein steps)."""
