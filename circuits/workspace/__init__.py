"""The learner's and the author's folders: `circuits init` (init), `circuits reset` (reset), `circuits new`
(scaffold). Each writes only files it creates; nothing a user wrote is overwritten."""
