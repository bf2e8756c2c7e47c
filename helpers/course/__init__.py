"""Course plumbing, not memory code: the offline stand-in chat model (``offline_model``), the
lesson runner behind ``make lessons`` and the notebook tests (``lessons``), the lesson-03 race demo
(``demos``) and the message table every lesson renders (``display``)."""
