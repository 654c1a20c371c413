"""TaskRecorderBolt: says which of its tasks got each word (its index among the bolt's
tasks, sorted), so a test can check a grouping's choice."""

from heronpy.api.bolt.bolt import Bolt


class TaskRecorderBolt(Bolt):
    outputs = ['task_index', 'word']

    def initialize(self, config, context):
        tasks = sorted(context.get_component_tasks(context.get_component_id()))
        self.index = tasks.index(context.get_task_id())

    def process(self, tup):
        self.emit([self.index, tup.values[0]], anchors=[tup])
        self.ack(tup)
