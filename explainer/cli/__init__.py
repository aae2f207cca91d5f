"""The `explainer` command: one argparse tree (main) with one module per subcommand, each providing
add_arguments(parser) and run(args). The top layer: it may import every other package.
"""
