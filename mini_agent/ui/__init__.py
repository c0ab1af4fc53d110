"""Widgets for the episode notebooks (ipywidgets); imported only by notebooks."""
