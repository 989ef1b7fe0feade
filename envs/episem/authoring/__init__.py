"""EpiSEM authoring: family files, their compiler and the importer of the authors' row format."""
