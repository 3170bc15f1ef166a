// KeepTime.Delay: a precise Task delay. keeptime's waiter thread calls back a
// learned lead before the deadline; the callback queues a thread-pool work
// item that polls, which spins at most the finishing spin and completes the
// task. No thread is blocked for the wait.
using System;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace Dev.KeepTime
{
    /// <summary>
    /// Mono, at exit, aborts every other thread that ever ran managed code
    /// and waits until each returns to managed code to die, which keeptime's
    /// waiter thread (parked in native code between callbacks) never does:
    /// the process would hang. Mono leaves alone threads flagged
    /// "don't manage" (its own thread-pool threads are); the waiter thread
    /// flags itself so on its first callback.
    /// </summary>
    internal static class MonoThreads
    {
        private const long DontManage = 1; // MONO_THREAD_FLAG_DONT_MANAGE

        private static readonly FieldInfo s_internalThread =
            typeof(Thread).GetField("internal_thread", BindingFlags.NonPublic | BindingFlags.Instance);

        internal static void LetExitWithoutThisThread()
        {
            try
            {
                if (s_internalThread == null) return; // not Mono
                object it = s_internalThread.GetValue(Thread.CurrentThread);
                FieldInfo flags = it == null ? null : it.GetType().GetField("flags", BindingFlags.NonPublic | BindingFlags.Instance);
                if (flags == null || flags.FieldType != typeof(IntPtr)) return;
                long now = ((IntPtr)flags.GetValue(it)).ToInt64();
                flags.SetValue(it, new IntPtr(now | DontManage));
            }
            catch (Exception)
            {
                // Another runtime layout: nothing to do.
            }
        }
    }

    internal sealed class PreciseDelay
    {
        private const int Ready = 0;

        // Kept in static fields so the GC never collects the delegate the
        // native side holds.
        private static readonly kt_delay_fn s_onDue = OnDue;
        private static readonly WaitCallback s_poll = Poll;

        // Continuations run inline on the pool thread that finishes the
        // delay (never on keeptime's waiter thread, which only queues work):
        // one pool hop less between the deadline and the awaiting code.
        private readonly TaskCompletionSource<bool> _tcs = new TaskCompletionSource<bool>();
        private readonly CancellationToken _token;
        private DelayHandle _handle;
        private GCHandle _self;
        private CancellationTokenRegistration _registration;
        private int _finished;

        private PreciseDelay(CancellationToken token) { _token = token; }

        internal static Task Start(ulong deadlineNs, long finishSpinNs, CancellationToken token)
        {
            if (token.IsCancellationRequested)
            {
                var canceled = new TaskCompletionSource<bool>();
                canceled.SetCanceled();
                return canceled.Task;
            }
            var d = new PreciseDelay(token);
            d._self = GCHandle.Alloc(d);
            DelayHandle h;
            int rc;
            t_inCall = true;
            try { rc = Native.kt_delay_start(deadlineNs, s_onDue, GCHandle.ToIntPtr(d._self), out h); }
            finally { t_inCall = false; }
            if (rc != Native.KT_OK)
            {
                d._self.Free();
                Native.Check(rc, "starting a delay");
            }
            if (finishSpinNs != KeepTime.DefaultDelayFinishSpinNs)
                Native.Check(Native.kt_delay_set_finish_spin_ns(h, finishSpinNs), "setting the finishing spin");
            Volatile.Write(ref d._handle, h);
            if (token.CanBeCanceled)
                d._registration = token.Register(s => ((PreciseDelay)s).Cancel(), d);
            return d._tcs.Task;
        }

        // On keeptime's waiter thread (or inside kt_delay_start/poll): hand
        // the poll to the pool at once. Must not call kt_delay_* here.
        [ThreadStatic] private static bool t_marked;
        [ThreadStatic] private static bool t_inCall;

        private static void OnDue(IntPtr userData)
        {
            try
            {
                // keeptime's waiter thread joins the runtime on its first
                // callback; as a background thread it does not hold up exit.
                // Only on keeptime's waiter thread: a callback from inside
                // kt_delay_start/kt_delay_poll runs on the caller's own thread.
                if (!t_marked && !t_inCall)
                {
                    t_marked = true;
                    Thread.CurrentThread.IsBackground = true;
                    MonoThreads.LetExitWithoutThisThread();
                }
                object target = GCHandle.FromIntPtr(userData).Target;
                ThreadPool.UnsafeQueueUserWorkItem(s_poll, target);
            }
            catch (Exception)
            {
                // Never let an exception unwind into native code.
            }
        }

        private static void Poll(object state)
        {
            var d = (PreciseDelay)state;
            DelayHandle h = Volatile.Read(ref d._handle);
            // The first callback can come from inside kt_delay_start, before
            // the handle is stored: wait the few instructions until it is.
            var spin = new SpinWait();
            while (h == null)
            {
                spin.SpinOnce();
                h = Volatile.Read(ref d._handle);
            }
            if (Volatile.Read(ref d._finished) != 0) return;
            int st;
            ulong now;
            int rc;
            t_inCall = true;
            try
            {
                rc = Native.kt_delay_poll(h, out st, out now);
            }
            catch (ObjectDisposedException)
            {
                return; // finished meanwhile by cancellation
            }
            finally
            {
                t_inCall = false;
            }
            if (rc == Native.KT_EINTR) return; // cancelled: Cancel completes the task
            if (rc != Native.KT_OK)
            {
                d.Finish(new InvalidOperationException("keeptime: delay poll: " + Native.StatusText(rc)));
                return;
            }
            if (st == Ready) d.Finish(null);
            // Pending: the callback comes again.
        }

        private void Cancel()
        {
            if (Volatile.Read(ref _finished) != 0) return;
            DelayHandle h = Volatile.Read(ref _handle);
            if (h != null)
            {
                try { Native.kt_delay_cancel(h); } catch (ObjectDisposedException) { }
            }
            Finish(null, canceled: true);
        }

        private void Finish(Exception error, bool canceled = false)
        {
            if (Interlocked.Exchange(ref _finished, 1) != 0) return;
            DelayHandle h = Volatile.Read(ref _handle);
            // No callback after kt_delay_cancel returns: then the GCHandle may go.
            try { Native.kt_delay_cancel(h); } catch (ObjectDisposedException) { }
            h.Dispose();
            _self.Free();
            _registration.Dispose();
            if (canceled) _tcs.TrySetCanceled(_token);
            else if (error != null) _tcs.TrySetException(error);
            else _tcs.TrySetResult(true);
        }
    }
}
