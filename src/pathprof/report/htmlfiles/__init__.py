"""Templates, stylesheet and script of the HTML report (package data)."""
