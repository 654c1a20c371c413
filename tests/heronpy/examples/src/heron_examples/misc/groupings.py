"""Custom groupings by class path (Heron's ``Grouping.custom('pkg.module.Class')``)."""

from heronpy.api.custom_grouping import ICustomGrouping


class LongWordsToEveryTask(ICustomGrouping):
    """Words longer than four letters go to every task, the others to the lowest; it
    checks that it runs in the emitting task, with heronpy's context."""

    def prepare(self, context, component, stream, target_tasks):
        assert context.get_component_id() == 'word_spout', context.get_component_id()
        assert context.get_task_id() in context.get_component_tasks('word_spout')
        self.target_tasks = sorted(target_tasks)

    def choose_tasks(self, values):
        return self.target_tasks if len(values[0]) > 4 else self.target_tasks[:1]
