"""Road-user sprites (Noto Emoji, Apache-2.0: see NOTICE), packaged as data."""
