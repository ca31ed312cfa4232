"""The report templates (Jinja2 HTML and the shared stylesheet), packaged as data."""
