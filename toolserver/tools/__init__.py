"""Tool groups, one module each; every module registers its tools in toolserver.registry."""
