// Profile: start a sleeper from what an earlier run on this machine learned.
using System;
using System.IO;
using System.Runtime.InteropServices;

namespace Dev.KeepTime
{
    /// <summary>
    /// A host profile that is not a valid profile (the message names the file,
    /// the line and what was expected there) or was made on another machine
    /// (the message names the field that differs and both values).
    /// </summary>
    public sealed class ProfileException : IOException
    {
        /// <summary>The profile's file.</summary>
        public string Path { get; private set; }

        internal ProfileException(string path, string message) : base("keeptime: " + message) { Path = path; }
    }

    /// <summary>
    /// A host profile: this machine's fingerprint and, per OS-wait length, the
    /// last wake-ups and the cost of an OS wait an earlier run learned. A fresh
    /// sleeper spins for its first hundreds of sleeps while it learns; one
    /// built with <see cref="SleeperBuilder.Profile"/> starts from the profile.
    /// Write one with <c>keeptime trace --profile FILE</c> or
    /// <see cref="Sleeper.WriteProfile"/>. Dispose it when done (the sleepers
    /// built from it keep their own copy).
    /// <code>
    /// using (var p = Profile.Load("host.profile"))
    /// using (var s = Sleeper.Builder().Profile(p).Build())
    ///     s.Sleep(TimeSpan.FromMilliseconds(1));
    /// </code>
    /// </summary>
    public sealed class Profile : IDisposable
    {
        internal readonly ProfileHandle _h;

        private Profile(ProfileHandle h) { _h = h; }

        /// <summary>
        /// Reads the profile at <paramref name="path"/>. A profile made on another
        /// machine is refused unless <paramref name="ignoreMachine"/>. Throws
        /// FileNotFoundException for a missing file and
        /// <see cref="ProfileException"/> for a file that cannot be read, is not
        /// a valid profile, or was made on another machine; nothing is loaded
        /// from a bad file.
        /// </summary>
        public static Profile Load(string path, bool ignoreMachine = false)
        {
            if (path == null) throw new ArgumentNullException("path");
            Native.EnsureLoaded();
            if (!File.Exists(path)) throw new FileNotFoundException("keeptime: no profile at " + path, path);
            ProfileHandle h;
            IntPtr error;
            int rc = Native.kt_profile_load(Native.Utf8(path), ignoreMachine ? 1u : 0u, out h, out error);
            if (rc == Native.KT_EPROFILE)
            {
                h.Dispose();
                throw new ProfileException(path, Native.TakeString(error, "profile " + path));
            }
            Native.TakeString(error, null);
            Native.Check(rc, "loading a profile");
            return new Profile(h);
        }

        /// <summary>Frees the native profile.</summary>
        public void Dispose() { _h.Dispose(); }
    }

    internal sealed class ProfileHandle : SafeHandle
    {
        public ProfileHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        protected override bool ReleaseHandle() { Native.kt_profile_free(handle); return true; }
    }
}
