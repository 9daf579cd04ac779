"""The read side of one project: loading, following, watching and caching what the faces show.

Everything a face (console, HUD, fleet, CLI) shows about a project is loaded here, below every face and
above the pure model and renderers in `views`, so there is one way a picture of the project is built.
"""
