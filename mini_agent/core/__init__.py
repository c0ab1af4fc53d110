"""Pure core: no network, files, processes, threads or clocks."""
