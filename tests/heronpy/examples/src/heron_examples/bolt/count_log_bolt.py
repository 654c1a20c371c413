"""CountLogBolt: appends every (word, count) it receives to ``<e2e.count_log>/<task>.log``
(when that option is set), so a test can read the counts of a topology run by
``heron submit``; a count replayed after a rollback is logged again, which a reader
that takes each word's largest count does not mind."""

import os

from heronpy.api.bolt.bolt import Bolt


class CountLogBolt(Bolt):
    def initialize(self, config, context):
        directory = config.get('e2e.count_log')
        self.out = None
        if directory:
            os.makedirs(directory, exist_ok=True)
            path = os.path.join(directory, f"{context.get_task_id()}.log")
            self.out = open(path, 'a', buffering=1)

    def process(self, tup):
        if self.out is not None:
            self.out.write(f"{tup.values[0]} {tup.values[1]}\n")
        self.ack(tup)
