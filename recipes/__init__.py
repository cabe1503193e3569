"""One small declarative recipe per architecture family (installed as ``hfgrow.recipes``).

To add a family, write a module here that defines ``RECIPE`` (see ``bert.py`` and the README's
"Adding a recipe") and list it below.
"""

from . import bert

RECIPES = (bert.RECIPE,)
