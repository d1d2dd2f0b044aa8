// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * r2cc as a torch.distributed backend (torch 1.13's c10d::ProcessGroup),
 * for CPU tensors.  Built as the Python extension r2cc_torch._C; the
 * package's __init__.py registers it as the "r2cc" backend.
 *
 * Threading.  One worker thread owns the communicator: every r2cc call on
 * it after the constructor is made there (the constructor runs before the
 * worker starts and the destructor after it has been joined, so the comm
 * never sees two threads).  A collective call checks its arguments on the
 * caller's thread, queues an Op (a closure that issues the r2cc
 * collective, plus an optional copy-out) and returns its Work at once.
 * The worker takes the queue in order, issues each Op, and keeps testing
 * the requests in flight with r2cc_coll_test(), which is also what makes
 * them progress; it busy-polls while anything is in flight and sleeps on
 * a condition variable otherwise.  When a request finishes the worker runs
 * the copy-out and completes the Work and then its Future (DDP waits on
 * the Future); Future callbacks therefore run on the worker, with no lock
 * of ours held.  A failed collective fails its Work and Future with the
 * r2cc error; the communicator's error sticks, so the ones after it fail
 * too, as r2cc documents.
 */
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <pybind11/chrono.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/utils/pybind.h>
#include <torch/csrc/utils/tensor_flatten.h>

#include <r2cc/bootstrap.h>
#include <r2cc/coll.h>
#include <r2cc/r2cc.h>

namespace py = pybind11;
using c10d::OpType;

namespace {

std::string errtext(const std::string &what, int rc)
{
	char buf[128];

	return c10::str(what, ": ", strerror_r(-rc, buf, sizeof(buf)), " (",
			rc, ")");
}

template <typename... Args>
[[noreturn]] void fail(const char *op, const Args &...args)
{
	throw std::runtime_error(c10::str("r2cc ", op, ": ", args...));
}

void check_dense(const at::Tensor &t, const char *op)
{
	if (!t.device().is_cpu())
		fail(op, "CPU tensors only (got one on ", t.device(), ")");
	if (t.layout() != at::kStrided)
		fail(op, "dense tensors only (got layout ", t.layout(), ")");
	if (!t.is_contiguous())
		fail(op, "contiguous tensors only");
}

/* torch <= 1.13 passes a list per call, one tensor per local device. */
const at::Tensor &single(const std::vector<at::Tensor> &v, const char *op)
{
	if (v.size() != 1)
		fail(op, "one tensor per call (got ", v.size(), ")");
	check_dense(v[0], op);
	return v[0];
}

void check_like(const at::Tensor &t, const at::Tensor &ref, int64_t numel,
		const char *op)
{
	check_dense(t, op);
	if (t.scalar_type() != ref.scalar_type())
		fail(op, "dtype ", t.scalar_type(), " where ",
		     ref.scalar_type(), " was expected");
	if (t.numel() != numel)
		fail(op, "a tensor of ", t.numel(), " elements where ", numel,
		     " were expected");
}

enum r2cc_dtype reduce_dtype(const at::Tensor &t, const char *op)
{
	switch (t.scalar_type()) {
	case at::kChar:		return R2CC_INT8;
	case at::kByte:		return R2CC_UINT8;
	case at::kInt:		return R2CC_INT32;
	case at::kLong:		return R2CC_INT64;
	case at::kHalf:		return R2CC_FLOAT16;
	case at::kBFloat16:	return R2CC_BFLOAT16;
	case at::kFloat:	return R2CC_FLOAT32;
	case at::kDouble:	return R2CC_FLOAT64;
	default:
		fail(op, "dtype ", t.scalar_type(), " not supported");
	}
}

enum r2cc_redop reduce_op(const c10d::ReduceOp &rop, const char *op)
{
	static const char *const names[] = {
		"SUM", "AVG", "PRODUCT", "MIN", "MAX",
		"BAND", "BOR", "BXOR", "PREMUL_SUM",
	};

	switch (rop.op_) {
	case c10d::ReduceOp::SUM:	return R2CC_SUM;
	case c10d::ReduceOp::AVG:	return R2CC_AVG;
	case c10d::ReduceOp::PRODUCT:	return R2CC_PROD;
	case c10d::ReduceOp::MIN:	return R2CC_MIN;
	case c10d::ReduceOp::MAX:	return R2CC_MAX;
	default:
		if (size_t(rop.op_) < sizeof(names) / sizeof(names[0]))
			fail(op, "reduce op ", names[rop.op_], " not supported");
		fail(op, "reduce op ", int(rop.op_), " not supported");
	}
}

/*
 * @flat's pieces (torch's flatten_dense_tensors layout: @ts back to back)
 * copied into @ts.  A lone tensor's flat form may be a view of it: the
 * copy is then onto itself, which torch allows.
 */
void unflatten(const at::Tensor &flat, const std::vector<at::Tensor> &ts)
{
	std::vector<at::Tensor> parts =
		torch::utils::unflatten_dense_tensors(flat, ts);

	for (size_t i = 0; i < ts.size(); i++)
		ts[i].copy_(parts[i]);
}

class WorkR2cc : public c10d::Work {
public:
	WorkR2cc(int rank, OpType type, const char *name, const char *title,
		 const std::vector<at::Tensor> &inputs,
		 std::vector<at::Tensor> result)
		: Work(rank, type, title, inputs), name_(name),
		  result_(std::move(result)),
		  future_(c10::make_intrusive<c10::ivalue::Future>(
			  c10::ListType::create(c10::TensorType::get())))
	{
	}

	const char *name() const { return name_; }

	/* Worker only, once. */
	void complete(std::exception_ptr err)
	{
		finish(err);
		if (err)
			future_->setError(err);
		else
			future_->markCompleted(c10::IValue(result_));
	}

	bool wait(std::chrono::milliseconds timeout) override
	{
		std::unique_lock<std::mutex> lock(mutex_);
		auto done = [this] { return completed_; };

		if (timeout == kNoTimeout)
			cv_.wait(lock, done);
		else if (!cv_.wait_for(lock, timeout, done))
			fail(name_, "not completed after ", timeout.count(),
			     " ms");
		if (exception_)
			std::rethrow_exception(exception_);
		return true;
	}

	std::vector<at::Tensor> result() override { return result_; }

	c10::intrusive_ptr<c10::ivalue::Future> getFuture() override
	{
		return future_;
	}

private:
	const char *name_;
	const std::vector<at::Tensor> result_;
	const c10::intrusive_ptr<c10::ivalue::Future> future_;
};

/* Issues an r2cc call; a call that needs no request leaves *req NULL. */
using Issue = std::function<int(struct r2cc_comm *, struct r2cc_coll **)>;

struct Op {
	c10::intrusive_ptr<WorkR2cc> work;
	Issue issue;
	std::function<void()> done;	/* copy-out once it succeeded */
	struct r2cc_coll *req = nullptr;
};

/* r2cc_allreduce() and r2cc_reduce_scatter() */
using ReduceFn = int (*)(struct r2cc_comm *, const void *, void *, size_t,
			 enum r2cc_dtype, enum r2cc_redop, struct r2cc_coll **);

/* @fn over @out's elements, of its dtype, from @in into @out. */
Issue reduction(ReduceFn fn, const at::Tensor &in, const at::Tensor &out,
		const c10d::ReduceOp &rop, const char *name)
{
	enum r2cc_dtype dt = reduce_dtype(out, name);
	enum r2cc_redop op = reduce_op(rop, name);
	size_t count = out.numel();

	return [=](struct r2cc_comm *c, struct r2cc_coll **r) {
		return fn(c, in.data_ptr(), out.data_ptr(), count, dt, op, r);
	};
}

/* Allgather and broadcast move bytes, so any dtype will do. */
Issue gather_bytes(const at::Tensor &in, const at::Tensor &out)
{
	return [=](struct r2cc_comm *c, struct r2cc_coll **r) {
		return r2cc_allgather(c, in.data_ptr(), out.data_ptr(),
				      in.nbytes(), R2CC_UINT8, r);
	};
}

/*
 * The rendezvous: @given (the package's creator agrees on one through the
 * store), else $R2CC_ROOT, else $MASTER_ADDR:$MASTER_PORT+1 (the store
 * has MASTER_PORT).
 */
std::string boot_root(const std::string &given)
{
	const char *root = std::getenv("R2CC_ROOT");
	const char *addr = std::getenv("MASTER_ADDR");
	const char *port = std::getenv("MASTER_PORT");
	std::string host;
	char *end;
	long p;

	if (!given.empty())
		return given;
	if (root)
		return root;
	if (!addr || !port)
		return "";
	errno = 0;
	p = std::strtol(port, &end, 10);
	if (errno || end == port || *end || p < 1 || p >= 65535)
		fail("init", "MASTER_PORT \"", port, "\" is not a port below 65535");
	host = addr;
	if (host.find(':') != std::string::npos && host[0] != '[')
		host = "[" + host + "]";	/* bare IPv6 */
	return host + ":" + std::to_string(p + 1);
}

} // namespace

class ProcessGroupR2cc : public c10d::ProcessGroup {
public:
	ProcessGroupR2cc(const c10::intrusive_ptr<c10d::Store> & /* the
			 creator used it for @given_root */, int rank, int size,
			 std::chrono::milliseconds timeout,
			 const std::string &given_root)
		: ProcessGroup(rank, size)
	{
		std::string root = boot_root(given_root);
		struct r2cc_boot_opts bo = {};
		struct r2cc_comm_opts co = {};
		int rc;

		if (root.empty() && size > 1)
			fail("init", "set R2CC_ROOT, or MASTER_ADDR and "
			     "MASTER_PORT, for the rendezvous");
		bo.size = sizeof(bo);
		bo.root = root.empty() ? nullptr : root.c_str();
		bo.rank = rank;
		bo.world_size = size;
		/* 0 (unset, negative): the library's default */
		bo.timeout_ms = uint32_t(std::clamp<int64_t>(timeout.count(), 0,
							     UINT32_MAX));
		co.size = sizeof(co);
		co.timeout_ms = bo.timeout_ms;

		/*
		 * The rendezvous first: a rank that then fails (no NIC)
		 * leaves it, and the others' r2cc_comm_init() fails at once
		 * rather than their rendezvous waiting for it until timeout.
		 */
		rc = r2cc_boot_init(&bo, &boot_);
		if (rc)
			throw std::runtime_error(errtext("r2cc_boot_init", rc));
		rc = r2cc_ctx_create(nullptr, &ctx_);
		if (rc) {
			r2cc_boot_destroy(boot_);
			throw std::runtime_error(errtext("r2cc_ctx_create", rc));
		}
		rc = r2cc_comm_init(ctx_, boot_, &co, &comm_);
		if (rc) {
			r2cc_ctx_destroy(ctx_);
			r2cc_boot_destroy(boot_);
			throw std::runtime_error(errtext("r2cc_comm_init", rc));
		}
		worker_ = std::thread(&ProcessGroupR2cc::run, this);
		init();
	}

	~ProcessGroupR2cc() override
	{
		PyThreadState *ts = nullptr;

		/*
		 * Python may drop the last reference with the GIL held;
		 * draining waits for Future callbacks that may want it, and
		 * r2cc_comm_destroy() for the other ranks (up to 30 s).
		 */
		if (Py_IsInitialized() && PyGILState_Check())
			ts = PyEval_SaveThread();
		{
			std::lock_guard<std::mutex> lock(mutex_);
			stop_ = true;
		}
		cv_.notify_one();
		worker_.join();	/* returns once everything queued finished */
		r2cc_comm_destroy(comm_);
		r2cc_ctx_destroy(ctx_);
		r2cc_boot_destroy(boot_);
		if (ts)
			PyEval_RestoreThread(ts);
	}

	const std::string getBackendName() const override { return "r2cc"; }

	c10::intrusive_ptr<c10d::Work>
	allreduce(std::vector<at::Tensor> &tensors,
		  const c10d::AllreduceOptions &opts) override
	{
		const at::Tensor &t = single(tensors, "allreduce");

		return submit(OpType::ALLREDUCE, "allreduce", "r2cc:all_reduce",
			      tensors, tensors,
			      reduction(r2cc_allreduce, t, t, opts.reduceOp,
					"allreduce"));
	}

	c10::intrusive_ptr<c10d::Work>
	allreduce_coalesced(std::vector<at::Tensor> &tensors,
			    const c10d::AllreduceCoalescedOptions &opts) override
	{
		const char *name = "allreduce_coalesced";

		if (tensors.empty())
			fail(name, "no tensors");
		for (const auto &t : tensors)
			check_like(t, tensors[0], t.numel(), name);
		at::Tensor flat = torch::utils::flatten_dense_tensors(tensors);

		return submit(OpType::ALLREDUCE_COALESCED, name,
			      "r2cc:all_reduce_coalesced", tensors, tensors,
			      reduction(r2cc_allreduce, flat, flat,
					opts.reduceOp, name),
			      [flat, tensors] { unflatten(flat, tensors); });
	}

	c10::intrusive_ptr<c10d::Work>
	reduce(std::vector<at::Tensor> &tensors,
	       const c10d::ReduceOptions &opts) override
	{
		const at::Tensor &t = single(tensors, "reduce");
		enum r2cc_dtype dt = reduce_dtype(t, "reduce");
		enum r2cc_redop op = reduce_op(opts.reduceOp, "reduce");
		int root = root_of(opts.rootRank, opts.rootTensor, "reduce");
		/* The others keep their input, as with gloo. */
		void *recv = root == rank_ ? t.data_ptr() : nullptr;

		Issue issue = [=](struct r2cc_comm *c, struct r2cc_coll **r) {
			return r2cc_reduce(c, t.data_ptr(), recv, t.numel(), dt,
					   op, root, r);
		};

		return submit(OpType::REDUCE, "reduce", "r2cc:reduce", tensors,
			      tensors, std::move(issue));
	}

	c10::intrusive_ptr<c10d::Work>
	broadcast(std::vector<at::Tensor> &tensors,
		  const c10d::BroadcastOptions &opts) override
	{
		const at::Tensor &t = single(tensors, "broadcast");
		int root = root_of(opts.rootRank, opts.rootTensor, "broadcast");
		Issue issue = [=](struct r2cc_comm *c, struct r2cc_coll **r) {
			return r2cc_broadcast(c, t.data_ptr(), t.data_ptr(),
					      t.nbytes(), R2CC_UINT8, root, r);
		};

		return submit(OpType::BROADCAST, "broadcast", "r2cc:broadcast",
			      tensors, tensors, std::move(issue));
	}

	c10::intrusive_ptr<c10d::Work>
	allgather(std::vector<std::vector<at::Tensor>> &outputs,
		  std::vector<at::Tensor> &inputs,
		  const c10d::AllgatherOptions &) override
	{
		const at::Tensor &in = single(inputs, "allgather");

		if (outputs.size() != 1 || outputs[0].size() != size_t(size_))
			fail("allgather", "one output list of ", size_,
			     " tensors");
		const std::vector<at::Tensor> &outs = outputs[0];
		for (const auto &t : outs)
			check_like(t, in, in.numel(), "allgather");
		/* Separate tensors: gather into one, then copy out. */
		at::Tensor flat = at::empty({size_ * in.numel()}, in.options());

		return submit(OpType::ALLGATHER, "allgather", "r2cc:all_gather",
			      inputs, outs, gather_bytes(in, flat),
			      [flat, outs] { unflatten(flat, outs); });
	}

	c10::intrusive_ptr<c10d::Work>
	_allgather_base(at::Tensor &output, at::Tensor &input,
			const c10d::AllgatherOptions &) override
	{
		check_dense(input, "_allgather_base");
		check_like(output, input, size_ * input.numel(),
			   "_allgather_base");
		return submit(OpType::_ALLGATHER_BASE, "_allgather_base",
			      "r2cc:_all_gather_base", {input}, {output},
			      gather_bytes(input, output));
	}

	c10::intrusive_ptr<c10d::Work>
	reduce_scatter(std::vector<at::Tensor> &outputs,
		       std::vector<std::vector<at::Tensor>> &inputs,
		       const c10d::ReduceScatterOptions &opts) override
	{
		const at::Tensor &out = single(outputs, "reduce_scatter");

		if (inputs.size() != 1 || inputs[0].size() != size_t(size_))
			fail("reduce_scatter", "one input list of ", size_,
			     " tensors");
		for (const auto &t : inputs[0])
			check_like(t, out, out.numel(), "reduce_scatter");
		at::Tensor flat =
			torch::utils::flatten_dense_tensors(inputs[0]);

		return submit(OpType::REDUCE_SCATTER, "reduce_scatter",
			      "r2cc:reduce_scatter", inputs[0], outputs,
			      reduction(r2cc_reduce_scatter, flat, out,
					opts.reduceOp, "reduce_scatter"));
	}

	c10::intrusive_ptr<c10d::Work>
	_reduce_scatter_base(at::Tensor &output, at::Tensor &input,
			     const c10d::ReduceScatterOptions &opts) override
	{
		const char *name = "_reduce_scatter_base";

		check_dense(output, name);
		check_like(input, output, size_ * output.numel(), name);
		return submit(OpType::_REDUCE_SCATTER_BASE, name,
			      "r2cc:_reduce_scatter_base", {input}, {output},
			      reduction(r2cc_reduce_scatter, input, output,
					opts.reduceOp, name));
	}

	c10::intrusive_ptr<c10d::Work>
	barrier(const c10d::BarrierOptions &) override
	{
		return submit(OpType::BARRIER, "barrier", "r2cc:barrier", {}, {},
			      [](struct r2cc_comm *c, struct r2cc_coll **r) {
				      return r2cc_barrier(c, r);
			      });
	}

	/* On the worker too, in the queue's order, like every comm call. */
	struct r2cc_comm_stats stats()
	{
		auto s = std::make_shared<struct r2cc_comm_stats>();

		s->size = sizeof(*s);
		submit(OpType::UNKNOWN, "stats", nullptr, {}, {},
		       [s](struct r2cc_comm *c, struct r2cc_coll **) {
			       return r2cc_comm_stats(c, s.get());
		       })->wait();
		return *s;
	}

private:
	int root_of(int64_t rank, int64_t tensor, const char *name) const
	{
		if (rank < 0 || rank >= size_ || tensor)
			fail(name, "root rank ", rank, " tensor ", tensor,
			     " out of range");
		return int(rank);
	}

	c10::intrusive_ptr<c10d::Work>
	submit(OpType type, const char *name, const char *title,
	       const std::vector<at::Tensor> &inputs,
	       std::vector<at::Tensor> result, Issue issue,
	       std::function<void()> done = nullptr)
	{
		Op op;

		op.work = c10::make_intrusive<WorkR2cc>(rank_, type, name,
							title, inputs,
							std::move(result));
		op.issue = std::move(issue);
		op.done = std::move(done);
		auto work = op.work;
		{
			std::lock_guard<std::mutex> lock(mutex_);
			queue_.push_back(std::move(op));
		}
		cv_.notify_one();
		return work;
	}

	/* The worker's. */
	void run()
	{
		std::deque<Op> inflight, fresh;
		std::unique_lock<std::mutex> lock(mutex_);

		for (;;) {
			if (inflight.empty())
				cv_.wait(lock, [this] {
					return stop_ || !queue_.empty();
				});
			if (stop_ && queue_.empty() && inflight.empty())
				return;
			fresh.swap(queue_);
			lock.unlock();

			for (auto &op : fresh) {
				int rc = op.issue(comm_, &op.req);

				if (rc || !op.req)
					finish(op, rc);
				else
					inflight.push_back(std::move(op));
			}
			fresh.clear();

			/*
			 * Collectives finish in the order issued, so the first
			 * one not finished ends the round (testing it moves
			 * all of them on).
			 */
			bool progressed = false;
			while (!inflight.empty()) {
				Op &op = inflight.front();
				int done = 0;
				int rc = r2cc_coll_test(op.req, &done);

				if (!rc && !done)
					break;
				finish(op, rc);
				inflight.pop_front();
				progressed = true;
			}
			if (!inflight.empty() && !progressed)
				std::this_thread::yield();
			lock.lock();
		}
	}

	void finish(Op &op, int rc)
	{
		std::exception_ptr err;

		if (rc)
			err = std::make_exception_ptr(std::runtime_error(
				errtext(c10::str("r2cc ", op.work->name()), rc)));
		else if (op.done)
			try {
				op.done();
			} catch (...) {
				err = std::current_exception();
			}
		op.work->complete(err);
	}

	struct r2cc_boot *boot_ = nullptr;
	struct r2cc_ctx *ctx_ = nullptr;
	struct r2cc_comm *comm_ = nullptr;

	std::mutex mutex_;		/* guards queue_ and stop_ */
	std::condition_variable cv_;	/* queue_ or stop_ changed */
	std::deque<Op> queue_;		/* submitted, not yet issued */
	bool stop_ = false;
	std::thread worker_;
};

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
	/* Registers c10d::ProcessGroup's Python type, our base class. */
	py::module::import("torch.distributed");

	py::class_<ProcessGroupR2cc, c10d::ProcessGroup,
		   c10::intrusive_ptr<ProcessGroupR2cc>>(m, "ProcessGroupR2cc")
		.def(py::init([](const c10::intrusive_ptr<c10d::Store> &store,
				 int rank, int size,
				 std::chrono::milliseconds timeout,
				 const std::string &root) {
			     return c10::make_intrusive<ProcessGroupR2cc>(
				     store, rank, size, timeout, root);
		     }),
		     py::arg("store"), py::arg("rank"), py::arg("size"),
		     py::arg("timeout"), py::arg("root") = std::string(),
		     /* the rendezvous blocks until every rank came */
		     py::call_guard<py::gil_scoped_release>())
		.def("stats", [](ProcessGroupR2cc &pg) {
			struct r2cc_comm_stats s;
			{
				py::gil_scoped_release nogil;
				s = pg.stats();
			}
			py::dict d;
			d["colls"] = s.colls;
			d["bytes_sent"] = s.bytes_sent;
			d["bytes_received"] = s.bytes_received;
			d["failovers"] = s.failovers;
			d["resent_bytes"] = s.resent_bytes;
			d["tcp_bytes"] = s.tcp_bytes;
			d["colls_rd"] = s.colls_rd;
			d["rd_max"] = s.rd_max;
			d["colls_weighted"] = s.colls_weighted;
			d["colls_optimal"] = s.colls_optimal;
			return d;
		});

	/* The checks a reduction makes, without a communicator (tests). */
	m.def("_check_reduce", [](const at::Tensor &t,
				  const c10d::ReduceOp &op) {
		check_dense(t, "allreduce");
		return py::make_tuple(int(reduce_dtype(t, "allreduce")),
				      int(reduce_op(op, "allreduce")));
	});
}
