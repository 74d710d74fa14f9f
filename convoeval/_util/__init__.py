"""convoeval's own small shared pieces, private to the package (users import nothing from here).

``aio`` the background event loop and ``blocking`` (a sync verb declared once from its coroutine); ``lazy`` the
lazy exports of the packages that load their names on first use; ``paths`` where state lives and the project root;
``urls`` URLs without secrets; ``html_blocks`` the HTML building blocks of reports and notebook displays;
``plugins`` the entry points other packages declare; ``sql_schema`` the reference schema read from the migrations.
They sit in the lowest layer beside ``errors``, so every package may use them; this file imports nothing, so
``import convoeval`` pays only for the piece it uses.
"""
