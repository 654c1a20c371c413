import sys

from engine.scheduler.service import main

sys.exit(main())
