# Running lit on the source tree directly points it at the generated site config.
import os
site = os.path.join(os.path.dirname(__file__), "..", "build", "test", "lit.site.cfg.py")
lit_config.load_config(config, os.path.abspath(site))
