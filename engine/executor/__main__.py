import sys

from engine.executor.main import main

sys.exit(main())
