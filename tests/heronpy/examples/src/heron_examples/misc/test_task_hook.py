"""TestTaskHook: counts every hook call; the running totals are a metric of its own
(``user/hook/<event>``), registered through the context the hook is prepared with."""

from collections import Counter

from heronpy.api.metrics import MultiAssignableMetrics
from heronpy.api.task_hook import ITaskHook


class TestTaskHook(ITaskHook):
    def prepare(self, conf, context):
        self.counter = Counter(prepare=1)
        self.metric = MultiAssignableMetrics()
        self.metric.update('prepare', 1)
        context.register_metric("hook", self.metric, 1)

    def _count(self, event):
        self.counter[event] += 1
        self.metric.update(event, self.counter[event])

    def clean_up(self):
        pass

    def emit(self, emit_info):
        self._count('emit')

    def spout_ack(self, spout_ack_info):
        self._count('spout_ack')

    def spout_fail(self, spout_fail_info):
        self._count('spout_fail')

    def bolt_execute(self, bolt_execute_info):
        self._count('bolt_execute')

    def bolt_ack(self, bolt_ack_info):
        self._count('bolt_ack')

    def bolt_fail(self, bolt_fail_info):
        self._count('bolt_fail')
