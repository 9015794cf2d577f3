;;; eglot_quickfix.el --- Emacs + Eglot as an independent client of `torchlint server'  -*- lexical-binding: t -*-
;; Run by test_emacs.py in --batch mode: open a buggy file, wait for Flymake
;; diagnostics, apply the preferred quick fix, wait for them to clear, and write
;; what happened to $OUT as JSON.  Idle timers do not fire in batch mode, so the
;; script sends Eglot's pending didChange and calls `flymake-start' itself while
;; it waits.
(require 'json)
(require 'eglot)
(require 'flymake)
(require 'python)

(defvar tl-result (list (cons 'steps [])))

(defun tl-step (name)
  (setf (alist-get 'steps tl-result) (vconcat (alist-get 'steps tl-result) (list name))))

(defun tl-wait (pred what)
  (let ((deadline (+ (float-time) 120)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (when (eglot-current-server) (eglot--signal-textDocument/didChange))
      (flymake-start)
      (accept-process-output nil 0.1))
    (unless (funcall pred) (error "timed out waiting for %s" what))))

(defun tl-diags ()
  (mapcar (lambda (d)
            (let ((lsp (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d)))))
              (list (cons 'code (plist-get lsp :code))
                    (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                    (cons 'source (plist-get lsp :source)))))
          (flymake-diagnostics)))

(condition-case err
    (progn
      (setq eglot-server-programs
            `((python-mode . ,(append (json-read-from-string (getenv "TORCHLINT_CMD")) nil))))
      (find-file (getenv "FIXTURE"))
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (tl-wait (lambda () (eglot-current-server)) "the server")
      (flymake-mode 1)
      (tl-wait (lambda () (flymake-diagnostics)) "diagnostics")
      (push (cons 'initial (vconcat (tl-diags))) tl-result)
      (tl-step "diagnostics")
      ;; A request that lands while the server re-lints (its settings arrived after the first lint)
      ;; is answered from the newer lint only once that one has published: ask again until it has.
      (let (actions preferred)
        (tl-wait (lambda ()
                   (setq actions (eglot-code-actions (point-min) (point-max) "quickfix" nil)
                         preferred (cl-find-if (lambda (a) (eq (plist-get a :isPreferred) t)) actions)))
                 "a preferred quick fix")
        (push (cons 'titles (vconcat (mapcar (lambda (a) (plist-get a :title)) actions))) tl-result)
        (unless preferred (error "no preferred quick fix"))
        (eglot--apply-workspace-edit (plist-get preferred :edit)))
      (tl-step "applied")
      (tl-wait (lambda () (null (flymake-diagnostics))) "diagnostics to clear")
      (tl-step "cleared")
      (push (cons 'text (buffer-substring-no-properties (point-min) (point-max))) tl-result)
      (ignore-errors (eglot-shutdown (eglot-current-server))))
  (error (push (cons 'error (format "%S" err)) tl-result)))

(with-temp-file (getenv "OUT")
  (insert (json-encode tl-result)))
(kill-emacs 0)
