# -*- Python -*-
# GoogleTest executables (named *Tests) under build/test/Unit.
import os

import lit.formats

config.name = "RECAST-Unit"
config.test_format = lit.formats.GoogleTest(".", "Tests")
config.test_source_root = os.path.join(config.recast_obj_root, "test", "Unit")
config.test_exec_root = config.test_source_root
