"""Probes of the program's environment: the modules it imports and the releases installed, the calls whose
signatures a release changed, the values that are None where a library expected one. They read only
sys.modules, module dictionaries, installed distributions' metadata and the files beside the script."""
