package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgemcp/edgemcp/pipeline/tasks"
)

// The gateway's tasks are counted by their runners (tasks.Runner.Stats),
// read when /metrics is scraped. A runner outlives reloads (the shell
// keeps it in a usage pool); one that is closed leaves its counts in
// retired, so that the counters never go down.

// TaskStatser is a runner's counters.
type TaskStatser interface{ Stats() tasks.Stats }

var taskRunners struct {
	sync.Mutex
	live    map[TaskStatser]struct{}
	retired tasks.Stats
}

// ExposeTasks counts r's tasks in edgemcp_tasks_*.
func ExposeTasks(r TaskStatser) {
	taskRunners.Lock()
	defer taskRunners.Unlock()
	if taskRunners.live == nil {
		taskRunners.live = map[TaskStatser]struct{}{}
	}
	taskRunners.live[r] = struct{}{}
}

// RetireTasks stops reading r (closed), keeping what it counted.
func RetireTasks(r TaskStatser) {
	taskRunners.Lock()
	defer taskRunners.Unlock()
	if _, ok := taskRunners.live[r]; !ok {
		return
	}
	delete(taskRunners.live, r)
	s, sum := r.Stats(), &taskRunners.retired
	sum.Created += s.Created
	sum.Completed += s.Completed
	sum.Failed += s.Failed
	sum.Cancelled += s.Cancelled
	sum.Expired += s.Expired
}

var (
	tasksCreatedDesc   = desc("tasks_created_total", "Tasks made on this node.")
	tasksRunningDesc   = desc("tasks_running", "Tasks whose call runs on this node now.")
	tasksCompletedDesc = desc("tasks_completed_total", "Tasks this node wrote completed (a tool's isError result completes a task).")
	tasksFailedDesc    = desc("tasks_failed_total", "Tasks this node wrote failed, a lapsed lease of another node's task included.")
	tasksCancelledDesc = desc("tasks_cancelled_total", "Tasks this node wrote cancelled.")
	tasksExpiredDesc   = desc("tasks_expired_total", "Calls this node stopped at their task's ttl.")
)

// tasksCollector sums the runners' counters at scrape time.
type tasksCollector struct{}

func (tasksCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{tasksCreatedDesc, tasksRunningDesc, tasksCompletedDesc, tasksFailedDesc, tasksCancelledDesc, tasksExpiredDesc} {
		ch <- d
	}
}

func (tasksCollector) Collect(ch chan<- prometheus.Metric) {
	taskRunners.Lock()
	sum := taskRunners.retired
	for r := range taskRunners.live {
		s := r.Stats()
		sum.Created += s.Created
		sum.Running += s.Running
		sum.Completed += s.Completed
		sum.Failed += s.Failed
		sum.Cancelled += s.Cancelled
		sum.Expired += s.Expired
	}
	taskRunners.Unlock()
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	counter(tasksCreatedDesc, sum.Created)
	ch <- prometheus.MustNewConstMetric(tasksRunningDesc, prometheus.GaugeValue, float64(sum.Running))
	counter(tasksCompletedDesc, sum.Completed)
	counter(tasksFailedDesc, sum.Failed)
	counter(tasksCancelledDesc, sum.Cancelled)
	counter(tasksExpiredDesc, sum.Expired)
}
