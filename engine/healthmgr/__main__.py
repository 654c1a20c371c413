import sys

from engine.healthmgr.main import main

if __name__ == "__main__":
    sys.exit(main())
